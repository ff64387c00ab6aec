// Two service instances over one database, both delivering (fan-out, both running the delivery jobs): every
// attempt of every delivery goes out exactly once (one job per delivery, locked by the run that takes it; each
// claim a conditional update), numbered 1..7 in order.
import { expect } from "chai";
import type { TestService } from "../support/test-service.ts";
import { createEndpoint, createUser, startWebhookTestService, userCreatedEventId } from "./support/fixtures.ts";
import { WebhookReceiver } from "./support/receiver.ts";

describe("webhook delivery with two instances on one database", () => {
  let first: TestService;
  let second: TestService;
  let receiver: WebhookReceiver;
  before(async () => {
    // Job scans every 20 ms, so both instances compete for every retry job.
    const timings = { jobPollMs: 20 };
    first = await startWebhookTestService({ timings });
    second = await startWebhookTestService({ timings, databaseUri: first.databaseUri });
    receiver = await WebhookReceiver.start((_req, res) => res.writeHead(500).end());
  });
  after(async () => {
    await receiver.close();
    await second.stop();
    await first.stop();
  });

  it("never sends an attempt twice", async () => {
    await createEndpoint(first, { url: receiver.url("/shared") });
    // The second instance adopted the first one's Default project: its keys are the first one's.
    const users = [await createUser(first), await createUser(second, first.sandboxKey)];
    const eventIds = [await userCreatedEventId(first, users[0].id), await userCreatedEventId(first, users[1].id)];
    await receiver.waitUntil(() => eventIds.every((id) => receiver.forEvent(id).length >= 7), 10_000);
    await new Promise((resolve) => setTimeout(resolve, 300));
    for (const id of eventIds) {
      expect(receiver.forEvent(id).map((r) => r.headers["svc-delivery-attempt"])).to.deep.equal(["1", "2", "3", "4", "5", "6", "7"]);
    }
  });
});
