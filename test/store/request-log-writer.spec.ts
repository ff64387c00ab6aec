// RequestLogWriter on its own: batches by size and by time, one insert at a time, everything written by flush(),
// a bounded buffer that drops (and reports) what does not fit, and failed writes reported, never thrown.
import { expect } from "chai";
import type { RequestLogDocument, RequestLogRepository } from "../../src/store/request-log-repository.ts";
import { RequestLogWriter } from "../../src/store/request-log-writer.ts";

function entry(i: number): RequestLogDocument {
  return {
    _id: `req_${i}`,
    project_id: "p",
    livemode: false,
    method: "GET",
    path: "/v1/events",
    route: "/v1/events",
    status: 200,
    error_code: null,
    idempotency_key: null,
    idempotent_replayed: false,
    api_key_id: "key_1",
    source: "rest",
    duration_ms: 1,
    created_at: new Date(),
  };
}

/** A repository whose inserts are recorded, and held until released when `hold` is set. */
class FakeRepository {
  batches: string[][] = [];
  inFlight = 0;
  maxInFlight = 0;
  hold: Promise<void> | null = null;
  fail = false;

  async insertMany(logs: RequestLogDocument[]): Promise<void> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      if (this.hold) await this.hold;
      if (this.fail) throw new Error("write failed");
      this.batches.push(logs.map((l) => l._id));
    } finally {
      this.inFlight--;
    }
  }
}

function writerOver(repository: FakeRepository, errors: unknown[], options: { batchSize?: number; maxBuffered?: number } = {}) {
  return new RequestLogWriter(repository as unknown as RequestLogRepository, {
    batchSize: options.batchSize ?? 3,
    flushIntervalMs: 20,
    maxBuffered: options.maxBuffered ?? 100,
    onError: (error) => errors.push(error),
  });
}

describe("RequestLogWriter", () => {
  it("writes a full batch at once and the rest after the interval, one insert at a time", async () => {
    const repository = new FakeRepository();
    const writer = writerOver(repository, []);
    for (let i = 0; i < 7; i++) writer.record(entry(i));
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(repository.batches).to.deep.equal([["req_0", "req_1", "req_2"], ["req_3", "req_4", "req_5"], ["req_6"]]);
    expect(repository.maxInFlight).to.equal(1);
  });

  it("flush() writes everything recorded so far", async () => {
    const repository = new FakeRepository();
    const writer = writerOver(repository, [], { batchSize: 500 });
    writer.record(entry(1));
    writer.record(entry(2));
    await writer.flush();
    expect(repository.batches).to.deep.equal([["req_1", "req_2"]]);
  });

  it("drops what does not fit while writes are held up, and reports how many", async () => {
    const repository = new FakeRepository();
    let release: () => void = () => {};
    repository.hold = new Promise((resolve) => {
      release = resolve;
    });
    const errors: unknown[] = [];
    const writer = writerOver(repository, errors, { batchSize: 2, maxBuffered: 4 });
    for (let i = 0; i < 10; i++) expect(() => writer.record(entry(i))).to.not.throw();
    release();
    await writer.flush();
    expect(repository.batches.flat()).to.deep.equal(["req_0", "req_1", "req_2", "req_3"]);
    expect(errors.map(String)).to.deep.equal(["Error: 6 request logs were dropped: the buffer was full while the database was slow or failing"]);
  });

  it("reports a failed write and goes on with the next batches", async () => {
    const repository = new FakeRepository();
    repository.fail = true;
    const errors: unknown[] = [];
    const writer = writerOver(repository, errors);
    writer.record(entry(1));
    await writer.flush();
    expect(errors.map(String)).to.deep.equal(["Error: write failed"]);
    repository.fail = false;
    writer.record(entry(2));
    await writer.flush();
    expect(repository.batches).to.deep.equal([["req_2"]]);
  });
});
