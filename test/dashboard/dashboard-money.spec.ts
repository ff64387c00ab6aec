// The console's money: the overview's balances equal the sum of the API's wallets and its volumes the completed
// transactions; a withdrawal made from a user's page opens its transaction page, with a timeline of its events;
// pending transactions completed and failed from the console (sandbox actions), a pending withdrawal canceled.
import { expect } from "chai";
import { approvedUser, balanceOf, fund } from "../money/support.ts";
import { eventually } from "../support/eventually.ts";
import type { TestService } from "../support/test-service.ts";
import { type DashboardClient, signedInConsole } from "./support.ts";

describe("the console's money pages", function () {
  this.timeout(40_000);
  let service: TestService;
  let client: DashboardClient;
  signedInConsole((started, signedIn) => {
    service = started;
    client = signedIn;
  });

  const post = (from: string, action: string, fields: Record<string, string> = {}) => client.submit(from, action, fields);

  const figure = (markup: string, name: string) => Number(new RegExp(`class="value ${name}">([\\d,.]+)<`).exec(markup)![1]!.replaceAll(",", ""));

  it("makes a withdrawal from the user's page, shows its timeline, and the overview's money equals the API's wallets", async () => {
    const payer = await approvedUser(service);
    await fund(service, payer, 100);
    const waiting = await approvedUser(service);
    const deposit = await service.request("POST", `/v1/sandbox/users/${waiting}/deposits`, {
      body: { amount_usd: 50, complete_after_seconds: 3600 },
    });
    expect(deposit.status).to.equal(201);

    const made = await post(`/dashboard/users/${payer}`, `/dashboard/users/${payer}/withdrawals`, { amount_usd: "10.00", description: "Rent" });
    expect(made.status).to.equal(303);
    expect(made.location).to.match(/^\/dashboard\/transactions\/txn_[A-Za-z0-9]{24}$/);
    const withdrawalId = made.location!.split("/").at(-1)!;
    await eventually(
      () => service.request("GET", `/v1/transactions/${withdrawalId}`),
      (r) => r.body.status === "completed",
      10_000,
    );
    const page = await client.get(made.location!);
    expect(page.text).to.include("Rent").and.include("transaction.completed").and.include("withdrawal.completed");
    expect(page.text.indexOf("Created")).to.be.below(page.text.indexOf("transaction.completed"));

    const overview = await client.get("/dashboard");
    const wallets = await Promise.all([payer, waiting].map((id) => balanceOf(service, id)));
    const sum = (field: "available_usd" | "pending_in_usd" | "pending_out_usd") => wallets.reduce((total, w) => total + w[field], 0);
    expect(figure(overview.text, "money-available")).to.equal(sum("available_usd"));
    expect(figure(overview.text, "money-pending-in")).to.equal(sum("pending_in_usd"));
    expect(figure(overview.text, "money-pending-out")).to.equal(sum("pending_out_usd"));
    expect(sum("available_usd")).to.equal(90);
    expect(overview.text).to.match(/<tr class="volume-deposits"><th scope="row">Deposits<\/th><td>100\.00<\/td><td>100\.00<\/td><\/tr>/);
    expect(overview.text).to.match(/<tr class="volume-withdrawals"><th scope="row">Withdrawals<\/th><td>10\.00<\/td><td>10\.00<\/td><\/tr>/);
    expect(overview.text).to.include(withdrawalId);
  });

  it("completes and fails pending transactions from the console (sandbox actions), and cancels a pending withdrawal", async () => {
    const userId = await approvedUser(service);
    const open = async () => {
      const created = await service.request("POST", `/v1/sandbox/users/${userId}/deposits`, {
        body: { amount_usd: 5, complete_after_seconds: 3600 },
      });
      return created.body.id as string;
    };
    const completing = await open();
    const completed = await post(`/dashboard/transactions/${completing}`, `/dashboard/transactions/${completing}/complete`);
    expect(completed.location).to.equal(`/dashboard/transactions/${completing}`);
    expect((await service.request("GET", `/v1/transactions/${completing}`)).body.status).to.equal("completed");
    const shown = await client.get(`/dashboard/transactions/${completing}`);
    expect(shown.text).to.include(`Transaction ${completing} completed.`).and.not.include("Complete (sandbox)");

    const failing = await open();
    await post(`/dashboard/transactions/${failing}`, `/dashboard/transactions/${failing}/fail`, { failure_code: "card_declined" });
    const failed = (await service.request("GET", `/v1/transactions/${failing}`)).body;
    expect(failed).to.include({ status: "failed", failure_code: "card_declined" });

    // A withdrawal is pending for its first second: canceled from its page within it.
    await fund(service, userId, 20);
    const withdrawal = await service.request("POST", `/v1/users/${userId}/withdrawals`, { body: { amount_usd: 3 } });
    const canceled = await post(`/dashboard/transactions/${withdrawal.body.id}`, `/dashboard/transactions/${withdrawal.body.id}/cancel`);
    expect(canceled.status).to.equal(303);
    expect((await service.request("GET", `/v1/transactions/${withdrawal.body.id}`)).body.status).to.equal("canceled");
  });

  it("answers another project's transaction with the API's 404", async () => {
    const page = await client.get("/dashboard/transactions/txn_AAAAAAAAAAAAAAAAAAAAAAAA");
    expect(page.status).to.equal(404);
    expect(page.text).to.include("transaction_not_found");
  });
});
