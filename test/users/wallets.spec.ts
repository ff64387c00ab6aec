// Live wallet provisioning: one synchronous attempt, then durable retries, then failed.
import { expect } from "chai";
import { SimulatedCustodian } from "../../src/wallets/custodian.ts";
import { eventually } from "../support/eventually.ts";
import { uniquePhone } from "../support/phones.ts";
import { startTestService, type TestService } from "../support/test-service.ts";

describe("users: live wallet provisioning", () => {
  let svc: TestService;
  const custodian = new SimulatedCustodian();

  before(async () => {
    svc = await startTestService({ custodian, timings: { walletRetryDelaysMs: [50, 50, 50, 50, 50], jobPollMs: 100 } });
  });
  after(async () => {
    await svc.stop();
  });

  const readUser = (id: string) => svc.request("GET", `/v1/users/${id}`, { key: svc.liveKey });

  it("is ready at once when the custodian answers", async () => {
    const calls = custodian.calls;
    const res = await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: uniquePhone() } });
    expect(res.body.wallet_status).to.equal("ready");
    expect(custodian.calls).to.equal(calls + 1);
  });

  it("is pending when the first attempt fails, then ready after a retry", async () => {
    custodian.failNext(2);
    const res = await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: uniquePhone() } });
    expect(res.status).to.equal(201);
    expect(res.body.wallet_status).to.equal("pending");
    const later = await eventually(
      () => readUser(res.body.id),
      (r) => r.body.wallet_status !== "pending",
      8000,
    );
    expect(later.body.wallet_status).to.equal("ready");
    const wallets = await svc.request("GET", `/v1/users/${res.body.id}/wallets`, { key: svc.liveKey });
    expect(wallets.body.data).to.have.length(1);
  });

  it("is failed after the last retry fails", async () => {
    custodian.failNext(6); // the synchronous attempt and all five retries
    const calls = custodian.calls;
    const res = await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: uniquePhone() } });
    expect(res.body.wallet_status).to.equal("pending");
    const later = await eventually(
      () => readUser(res.body.id),
      (r) => r.body.wallet_status === "failed",
      8000,
    );
    expect(later.body.wallet_status).to.equal("failed");
    expect(custodian.calls - calls).to.equal(6);
    const wallets = await svc.request("GET", `/v1/users/${res.body.id}/wallets`, { key: svc.liveKey });
    expect(wallets.body.data).to.deep.equal([]);
    custodian.failNext(0);
  });

  it("user.created shows the wallet as the creation response did", async () => {
    const res = await svc.request("POST", "/v1/users", { key: svc.liveKey, body: { phone: uniquePhone() } });
    const events = await svc.request("GET", "/v1/events?type=user.created&limit=1", { key: svc.liveKey });
    expect(events.body.data[0].data.object).to.deep.equal(res.body);
  });
});
