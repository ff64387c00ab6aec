// Small steps the webhook tests share: a service with a short retry schedule, endpoints, events, other tenants.
import { expect } from "chai";
import { uniquePhone } from "../../support/phones.ts";
import { startTestService, type TestService, type TestServiceOptions } from "../../support/test-service.ts";

/**
 * Retries 50 ms apart, a 1 s attempt time-out, and the job queue looking for due jobs every 20 ms (a retry job
 * moved to its time is found by that scan), so a whole cycle of 7 attempts takes well under a second.
 */
export function startWebhookTestService(options: TestServiceOptions = {}): Promise<TestService> {
  return startTestService({
    ...options,
    env: { SVC_WEBHOOK_RETRY_SCHEDULE: "50ms,50ms,50ms,50ms,50ms,50ms", SVC_WEBHOOK_TIMEOUT_MS: "1000", ...options.env },
    timings: { jobPollMs: 100, ...options.timings },
  });
}

export async function createEndpoint(svc: TestService, body: Record<string, unknown>, key?: string): Promise<any> {
  const response = await svc.request("POST", "/v1/webhook-endpoints", { body, ...(key ? { key } : {}) });
  expect(response.status, response.text).to.equal(201);
  return response.body;
}

/** Creates a user, which emits `user.created`; answers the user. */
export async function createUser(svc: TestService, key?: string): Promise<any> {
  const response = await svc.request("POST", "/v1/users", { body: { phone: uniquePhone() }, ...(key ? { key } : {}) });
  expect(response.status, response.text).to.equal(201);
  return response.body;
}

/** The `user.created` event of a user, from the event log. */
export async function userCreatedEventId(svc: TestService, userId: string, key?: string): Promise<string> {
  const list = await svc.request("GET", "/v1/events?type=user.created&limit=100", key ? { key } : {});
  const event = list.body.data.find((e: any) => e.data.object.id === userId);
  expect(event, `user.created of ${userId}`).to.exist;
  return event.id;
}

/** Approves a sandbox user's KYC through a session and the sandbox driver (emits `kyc.approved`); answers the event id. */
export async function publishKycApproved(svc: TestService, userId: string): Promise<string> {
  const session = await svc.request("POST", `/v1/users/${userId}/kyc-sessions`, { body: {} });
  expect(session.status, session.text).to.equal(201);
  const approved = await svc.request("POST", `/v1/sandbox/kyc-sessions/${session.body.id}/approve`, { body: {} });
  expect(approved.status, approved.text).to.equal(200);
  const list = await svc.request("GET", "/v1/events?type=kyc.approved&limit=100");
  const event = list.body.data.find((e: any) => e.data.object.user_id === userId);
  expect(event, `kyc.approved of ${userId}`).to.exist;
  return event.id;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
