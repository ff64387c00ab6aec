// `svc logs tail` as a developer runs it (the package's bin, in a child process): a 404 made from another shell
// shows as a line with its status, code, path and request id; --status filters; a bad filter is one clear line.
// The tail runs through the bin; the error cases through the CLI's transpiled entry, as the other CLI tests run it
// (each start through the bin's tsx is seconds of CPU).
import { expect } from "chai";
import { compiledEntry, runProcess, type RunningProcess, startProcess } from "../support/processes.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { until } from "../support/eventually.ts";

const SVC = ["bin/svc.js"];
const SVC_COMPILED = [compiledEntry("src/cli/svc.ts")];
const READY = /^Ready! Tailing the request log of /;

describe("svc logs tail", function () {
  // Every CLI run starts node and tsx: seconds each on a loaded machine.
  this.timeout(120_000);
  let svc: TestService;
  let tail: RunningProcess | null = null;
  let env: Record<string, string>;

  before(async () => {
    svc = await startTestService();
    env = { SVC_API_KEY: svc.sandboxKey, SVC_URL: svc.baseUrl, SVC_GRPC_URL: "" };
  });

  after(async () => {
    await tail?.kill();
    await svc?.stop();
  });

  it("shows a 404 made from another shell, and not the successes --status 4xx leaves out", async () => {
    const started = await startProcess("node", [...SVC, "logs", "tail", "--status", "4xx"], { env, ready: READY, timeoutMs: 60_000 });
    tail = started.running;
    // Ready is said once the tail is subscribed (its caught_up message).
    expect(svc.app.liveRequestLogs.size).to.equal(1);
    const success = (await svc.request("GET", "/v1/events")).headers.get("x-request-id")!;
    const refused = await svc.request("GET", "/v1/users/999999999");
    const requestId = refused.headers.get("x-request-id")!;
    const shown = await until(async () => tail!.output.some((line) => line.includes(requestId)), 20_000);
    expect(shown, tail.output.join("\n")).to.equal(true);
    const line = tail.output.find((l) => l.includes(requestId))!;
    expect(line).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z {2}\[404 user_not_found\] GET \/v1\/users\/999999999 {2}\(rest, \d+ ms\) {2}req_/);
    expect(tail.output.join("\n")).to.not.include(success);
  });

  it("refuses a bad --status with the service's one-line error, and a missing subcommand", async () => {
    const bad = await runProcess("node", [...SVC_COMPILED, "logs", "tail", "--status", "4x"], { env, timeoutMs: 60_000 });
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.match(/^svc: validation_error: status must be/m);
    const missing = await runProcess("node", [...SVC_COMPILED, "logs"], { env, timeoutMs: 60_000 });
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.include("svc: give tail (svc logs --help)");
  });
});
