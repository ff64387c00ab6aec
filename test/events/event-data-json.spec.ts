// Money inside an event over RPC: `Event.data_json` is the exact JSON text REST answers and a webhook body carries,
// so a transaction's amounts keep their decimal digits over gRPC and Connect (binary and JSON), in GetEvent,
// ListEvents and StreamEvents, where the deprecated `data` Struct carries binary doubles. A stream opened with
// `exclude_struct_data` leaves the Struct out.
import { createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { expect } from "chai";
import { EventsService, type StreamEventsResponse } from "../../gen/svc/v1/events_pb.ts";
import { TransactionsService } from "../../gen/svc/v1/transactions_pb.ts";
import { approvedUser } from "../money/support.ts";
import { GrpcTestClient } from "../support/grpc-client.ts";
import { startTestService, type TestService } from "../support/test-service.ts";
import { WebhookReceiver } from "../webhooks/support/receiver.ts";

/** A decimal number's digits as an integer of its `exponent` minor units ("1234.57", 2 -> 123457n), no float involved. */
function minorUnits(digits: string, exponent: number): bigint {
  const [whole, fraction = ""] = digits.split(".");
  expect(fraction.length, digits).to.be.at.most(exponent);
  return BigInt(whole! + fraction.padEnd(exponent, "0"));
}

/** The digits of a number member of JSON text, as written. */
function numberText(json: string, member: string): string {
  const match = new RegExp(`"${member}":(-?[0-9.eE+-]+)`).exec(json);
  expect(match, `${member} in ${json}`).to.not.equal(null);
  return match![1]!;
}

describe("Event.data_json: an event's data as exact JSON text over RPC", function () {
  this.timeout(30_000);
  let svc: TestService;
  let receiver: WebhookReceiver;
  let transports: Record<string, Transport>;

  before(async () => {
    svc = await startTestService();
    receiver = await WebhookReceiver.start();
    const endpoint = await svc.request("POST", "/v1/webhook-endpoints", { body: { url: receiver.url() } });
    expect(endpoint.status, endpoint.text).to.equal(201);
    const withKey: Interceptor = (next) => (request) => {
      request.header.set("authorization", `Bearer ${svc.sandboxKey}`);
      return next(request);
    };
    const interceptors = [withKey];
    transports = {
      grpc: createGrpcTransport({ baseUrl: `http://${svc.grpcAddress}`, interceptors }),
      "connect binary": createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", useBinaryFormat: true, interceptors }),
      "connect json": createConnectTransport({ baseUrl: svc.baseUrl, httpVersion: "1.1", useBinaryFormat: false, interceptors }),
    };
  });
  after(async () => {
    await receiver?.close();
    await svc?.stop();
  });

  it("carries a deposit's amounts digit for digit over gRPC and Connect, the text REST and the webhook body carry", async () => {
    const user = await approvedUser(svc);
    const userCreated = (await svc.request("GET", "/v1/events?type=user.created&limit=100")).body.data.find(
      (e: { data: { object: { id: string } } }) => e.data.object.id === user,
    ).id as string;
    const deposit = await svc.request("POST", `/v1/sandbox/users/${user}/deposits`, {
      body: { amount_usd: 1234.57, fee_usd: 0.29, fiat_currency: "KWD", fiat_amount: 12345678.901, complete_after_seconds: 3600 },
    });
    expect(deposit.status, deposit.text).to.equal(201);
    const received = (await svc.request("GET", "/v1/events?type=transaction.received&limit=100")).body.data.find(
      (e: { data: { object: { id: string } } }) => e.data.object.id === deposit.body.id,
    ).id as string;

    // The exact amounts, from the transaction's integer fields.
    const transaction = (await createClient(TransactionsService, transports.grpc!).getTransaction({ id: deposit.body.id })).transaction!;
    expect([transaction.amountCents, transaction.feeCents, transaction.fiatAmountMinor, transaction.fiatExponent]).to.deep.equal([
      123457n,
      29n,
      12345678901n,
      3,
    ]);
    /** Whether JSON text of the event's data holds those amounts, digit for digit. */
    const exactIn = (json: string) => {
      const object = json.slice(json.indexOf('"object":'));
      expect(minorUnits(numberText(object, "amount_usd"), 2)).to.equal(transaction.amountCents);
      expect(minorUnits(numberText(object, "fee_usd"), 2)).to.equal(transaction.feeCents);
      expect(minorUnits(numberText(object, "fiat_amount"), 3)).to.equal(transaction.fiatAmountMinor);
    };

    // REST's answer and the webhook body carry the same text, which is what data_json holds.
    const rest = await svc.request("GET", `/v1/events/${received}`);
    const dataJson = JSON.stringify(rest.body.data);
    expect(rest.text).to.include(`"data":${dataJson}`);
    exactIn(dataJson);
    await receiver.waitUntil(() => receiver.forEvent(received).length > 0, 10_000);
    expect(receiver.forEvent(received)[0]!.rawBody.endsWith(`,"data":${dataJson}}`)).to.equal(true);

    // A stock gRPC client built from the .proto files (no generated code of this repository).
    const stock = new GrpcTestClient(svc.grpcAddress);
    const auth = { authorization: `Bearer ${svc.sandboxKey}` };
    const got = await stock.ok("EventsService", "GetEvent", { id: received }, auth);
    expect(got.message.event.data_json).to.equal(dataJson);
    const listed = await stock.ok("EventsService", "ListEvents", { type: "transaction.received", limit: 100 }, auth);
    expect(listed.message.data.find((e: { id: string }) => e.id === received).data_json).to.equal(dataJson);
    // What the deprecated Struct carries instead is a double: printed to the 17 digits a double needs (as C's %.17g
    // or Java's BigDecimal would), 0.29 is not 0.29.
    const structFee = got.message.event.data.fields.object.structValue.fields.fee_usd.numberValue as number;
    expect(structFee.toPrecision(17)).to.equal("0.28999999999999998");

    for (const [name, transport] of Object.entries(transports)) {
      const events = createClient(EventsService, transport);
      expect((await events.getEvent({ id: received })).event!.dataJson, name).to.equal(dataJson);
      const page = await events.listEvents({ type: "transaction.received", limit: 100 });
      expect(page.data.find((e) => e.id === received)!.dataJson, name).to.equal(dataJson);
      for (const excludeStructData of [false, true]) {
        const abort = new AbortController();
        const stream = events.streamEvents(
          { startingAfter: userCreated, types: ["transaction.received"], excludeStructData },
          { signal: abort.signal },
        ) as AsyncIterable<StreamEventsResponse>;
        let first: StreamEventsResponse | undefined;
        for await (const message of stream) {
          first = message;
          break;
        }
        abort.abort();
        expect(first!.event!.id, name).to.equal(received);
        expect(first!.event!.dataJson, name).to.equal(dataJson);
        // Without the option a stream still fills the Struct, for clients that read it.
        expect(first!.event!.data, `${name} ${excludeStructData}`).to.deep.equal(excludeStructData ? undefined : rest.body.data);
      }
    }
  });
});
