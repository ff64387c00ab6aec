// The in-process queue of attempts: bounded concurrency, one run per queued id, and a claim that arrives
// for an id already queued or running is never lost.
import { expect } from "chai";
import { DeliveryDispatcher } from "../../src/webhooks/delivery-dispatcher.ts";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

const tick = () => new Promise((r) => setImmediate(r));

/** A dispatcher whose attempts record their start and then wait for their gate, opened by the test. */
function gatedDispatcher(concurrency: number, startsPerTurn: number) {
  const started: string[] = [];
  const gates = new Map<string, ReturnType<typeof deferred>>();
  const dispatcher = new DeliveryDispatcher<string>(
    async (id) => {
      started.push(id);
      const gate = deferred();
      gates.set(id, gate);
      await gate.promise;
    },
    concurrency,
    () => {},
    startsPerTurn,
  );
  return { dispatcher, started, gates };
}

describe("DeliveryDispatcher", () => {
  it("runs at most `concurrency` attempts at once", async () => {
    const gates = new Map<string, ReturnType<typeof deferred>>();
    let running = 0;
    let peak = 0;
    const dispatcher = new DeliveryDispatcher<string>(
      async (id) => {
        running++;
        peak = Math.max(peak, running);
        const gate = deferred();
        gates.set(id, gate);
        await gate.promise;
        running--;
      },
      2,
      () => {},
    );
    for (const id of ["a", "b", "c", "d"]) dispatcher.submit(id);
    await tick();
    expect(running).to.equal(2);
    expect(dispatcher.backlog).to.equal(2);
    for (const id of ["a", "b", "c", "d"]) {
      await tick();
      gates.get(id)?.resolve();
      await tick();
    }
    expect(peak).to.equal(2);
  });

  it("runs an id queued twice once, with the hints that came last", async () => {
    const runs: [string, string | undefined][] = [];
    const blocker = deferred();
    const dispatcher = new DeliveryDispatcher<string>(
      async (id, hints) => {
        runs.push([id, hints]);
        if (id === "block") await blocker.promise;
      },
      1,
      () => {},
    );
    dispatcher.submit("block");
    dispatcher.submit("x");
    dispatcher.submit("x", "claimed");
    blocker.resolve();
    await tick();
    await tick();
    expect(runs).to.deep.equal([
      ["block", undefined],
      ["x", "claimed"],
    ]);
  });

  it("runs again with a claim that arrived while the id was running", async () => {
    const runs: [string, string | undefined][] = [];
    const first = deferred();
    const dispatcher = new DeliveryDispatcher<string>(
      async (id, hints) => {
        runs.push([id, hints]);
        if (runs.length === 1) await first.promise;
      },
      4,
      () => {},
    );
    dispatcher.submit("x");
    await tick();
    dispatcher.submit("x", "claimed"); // the running attempt found the delivery held by this claim
    first.resolve();
    await tick();
    await tick();
    expect(runs).to.deep.equal([
      ["x", undefined],
      ["x", "claimed"],
    ]);
  });

  it("stops taking work and waits for the attempts running", async () => {
    const gate = deferred();
    const ran: string[] = [];
    const dispatcher = new DeliveryDispatcher<string>(
      async (id) => {
        ran.push(id);
        await gate.promise;
      },
      1,
      () => {},
    );
    dispatcher.submit("a");
    dispatcher.submit("b");
    await tick();
    let stopped = false;
    const stopping = dispatcher.stop().then(() => (stopped = true));
    await tick();
    expect(stopped).to.equal(false);
    gate.resolve();
    await stopping;
    dispatcher.submit("c");
    await tick();
    expect(ran).to.deep.equal(["a"]);
  });

  it("starts at most `startsPerTurn` attempts in one event-loop turn, the rest in the turns after", async () => {
    const started: string[] = [];
    const held = deferred();
    const dispatcher = new DeliveryDispatcher<string>(
      async (id) => {
        started.push(id);
        await held.promise;
      },
      100,
      () => {},
      4,
    );
    const ids = Array.from({ length: 10 }, (_, i) => `d${i}`);
    for (const id of ids) dispatcher.submit(id);
    expect(started).to.deep.equal(ids.slice(0, 4));
    expect(dispatcher.backlog).to.equal(6);
    await tick();
    expect(started).to.deep.equal(ids.slice(0, 8));
    // Idle only once the attempts held back have run too.
    held.resolve();
    await dispatcher.whenIdle();
    expect(started).to.deep.equal(ids);
    expect(dispatcher.backlog).to.equal(0);
  });

  it("hands a finished attempt's slot to the next one within the turn's count of starts", async () => {
    const { dispatcher, started, gates } = gatedDispatcher(2, 2);
    for (const id of ["a", "b", "c", "d"]) dispatcher.submit(id);
    expect(started).to.deep.equal(["a", "b"]);
    gates.get("a")!.resolve();
    gates.get("b")!.resolve();
    // Promise callbacks only: this turn has started its 2 already, so the freed slots wait for the next turn.
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(started).to.deep.equal(["a", "b"]);
    expect(dispatcher.backlog).to.equal(2);
    await tick();
    expect(started).to.deep.equal(["a", "b", "c", "d"]);
    gates.get("c")!.resolve();
    gates.get("d")!.resolve();
    await dispatcher.whenIdle();
    expect(dispatcher.backlog).to.equal(0);
  });

  it("starts the next attempt in a freed slot at once while the turn's count allows", async () => {
    const { dispatcher, started, gates } = gatedDispatcher(1, 4);
    for (const id of ["a", "b"]) dispatcher.submit(id);
    expect(started).to.deep.equal(["a"]);
    gates.get("a")!.resolve();
    for (let i = 0; i < 5; i++) await Promise.resolve();
    expect(started).to.deep.equal(["a", "b"]);
    gates.get("b")!.resolve();
    await dispatcher.whenIdle();
  });

  it("has room once at most four slots' worth of attempts wait, and lets a fan-out wait no longer than it asks", async () => {
    const { dispatcher, gates } = gatedDispatcher(2, 100);
    for (let i = 0; i < 2 + 9; i++) dispatcher.submit(`a${i}`);
    await tick();
    expect(dispatcher.backlog).to.equal(9);
    let roomy = false;
    const waiting = dispatcher.room(60_000).then(() => (roomy = true));
    await tick();
    expect(roomy).to.equal(false);
    gates.get("a0")!.resolve();
    await tick();
    await tick();
    expect(dispatcher.backlog).to.equal(8);
    await waiting;
    expect(roomy).to.equal(true);
    // Room at once while the backlog is within bounds.
    let at = Date.now();
    await dispatcher.room(60_000);
    expect(Date.now() - at).to.be.below(1000);
    // A full queue whose slots never free: the wait ends at its limit.
    for (let i = 0; i < 5; i++) dispatcher.submit(`b${i}`);
    await tick();
    expect(dispatcher.backlog).to.equal(13);
    at = Date.now();
    await dispatcher.room(30);
    expect(Date.now() - at).to.be.at.least(25);
    // Stopping ends every wait.
    const stopped = dispatcher.room(60_000);
    const stopping = dispatcher.stop();
    await stopped;
    for (const gate of gates.values()) gate.resolve();
    await stopping;
  });
});
