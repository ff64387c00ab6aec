// A message encoded once: the binary encoder writes exactly the original's bytes, alone or inside another message,
// and a reader decodes the original from them; the encoding told to a writer that frames it; which content types
// count as binary codecs.
import { create, fromBinary, toBinary } from "@bufbuild/protobuf";
import { expect } from "chai";
import { EventSchema, StreamEventsResponseSchema } from "../../gen/svc/v1/events_pb.ts";
import { encodedOnce, encodingOf, isBinaryContentType } from "../../src/messages/encoded-once.ts";
import { eventMessage } from "../../src/messages/event-messages.ts";
import type { EventDocument } from "../../src/store/event-repository.ts";

function documentOf(id: string, amount: string): EventDocument {
  return {
    _id: id,
    project_id: "8b0f3c52-5d5e-4d38-9a53-3f0c2b6e2f10",
    livemode: false,
    type: "transaction.completed",
    created_at: new Date("2026-11-27T16:00:00.123Z"),
    data: { object: { id: "tx_1", object: "transaction", amount, currency: "usd", nested: { list: [1, "two", null] } } },
    fanned_out: true,
  };
}

describe("encodedOnce", () => {
  const event = eventMessage(documentOf("evt_1", "12.30"), { structData: true });
  const message = create(StreamEventsResponseSchema, { event, projectId: "8b0f3c52-5d5e-4d38-9a53-3f0c2b6e2f10" });

  it("writes the original's bytes, which decode to the original", () => {
    const encoded = encodedOnce(StreamEventsResponseSchema, message);
    expect(encoded.event).to.equal(undefined);
    expect(Buffer.from(toBinary(StreamEventsResponseSchema, encoded))).to.deep.equal(Buffer.from(toBinary(StreamEventsResponseSchema, message)));
    expect(fromBinary(StreamEventsResponseSchema, toBinary(StreamEventsResponseSchema, encoded))).to.deep.equal(message);
  });

  it("tells its whole encoding to a writer that frames it (a gRPC stream), and nothing of any other message", () => {
    const encoded = encodedOnce(StreamEventsResponseSchema, message);
    expect(Buffer.from(encodingOf(encoded)!)).to.deep.equal(Buffer.from(toBinary(StreamEventsResponseSchema, message)));
    expect(encodingOf(message)).to.equal(undefined);
    expect(encodingOf(create(StreamEventsResponseSchema, { caughtUp: true }))).to.equal(undefined);
    expect(encodingOf(encodedOnce(StreamEventsResponseSchema, create(StreamEventsResponseSchema)))).to.have.length(0);
  });

  it("keeps the encoding as one unknown field, the first field's tag then every other byte, and nothing for an empty message", () => {
    const many = create(StreamEventsResponseSchema, { events: [event, event], projectId: "p" });
    const encoded = encodedOnce(StreamEventsResponseSchema, many);
    const bytes = toBinary(StreamEventsResponseSchema, many);
    expect(encoded.$unknown).to.have.length(1);
    // The encoder writes project_id (field 2, length-delimited) first: its tag is one byte, (2 << 3) | 2.
    expect(bytes[0]).to.equal(0x12);
    expect(encoded.$unknown![0]!.no).to.equal(2);
    expect(encoded.$unknown![0]!.wireType).to.equal(2);
    expect(Buffer.from(encoded.$unknown![0]!.data)).to.deep.equal(Buffer.from(bytes.subarray(1)));
    const empty = encodedOnce(StreamEventsResponseSchema, create(StreamEventsResponseSchema));
    expect(empty.$unknown).to.equal(undefined);
    expect(toBinary(StreamEventsResponseSchema, empty)).to.have.length(0);
  });

  it("writes the original's bytes inside another message, in the order it is given", () => {
    const events = [event, eventMessage(documentOf("evt_2", "0.05"), { structData: false })];
    const plain = create(StreamEventsResponseSchema, { events, projectId: "p" });
    const shared = create(StreamEventsResponseSchema, { events: events.map((e) => encodedOnce(EventSchema, e)), projectId: "p" });
    const bytes = toBinary(StreamEventsResponseSchema, shared);
    expect(Buffer.from(bytes)).to.deep.equal(Buffer.from(toBinary(StreamEventsResponseSchema, plain)));
    expect(fromBinary(StreamEventsResponseSchema, bytes).events.map((e) => [e.id, e.dataJson])).to.deep.equal([
      ["evt_1", '{"object":{"id":"tx_1","object":"transaction","amount":"12.30","currency":"usd","nested":{"list":[1,"two",null]}}}'],
      ["evt_2", '{"object":{"id":"tx_1","object":"transaction","amount":"0.05","currency":"usd","nested":{"list":[1,"two",null]}}}'],
    ]);
  });

  it("counts gRPC's, gRPC-Web's and Connect's protobuf content types as binary, JSON ones and none as not", () => {
    const binary = [
      "application/grpc",
      "application/grpc+proto",
      "application/grpc-web",
      "application/grpc-web+proto",
      "application/grpc-web-text",
      "application/connect+proto",
      "application/proto",
    ];
    const json = [
      "application/grpc+json",
      "application/grpc-web+json",
      "application/connect+json",
      "application/json",
      "application/json; charset=utf-8",
      "application/grpc+JSON",
    ];
    expect(binary.filter((type) => !isBinaryContentType(type))).to.deep.equal([]);
    expect(json.filter((type) => isBinaryContentType(type))).to.deep.equal([]);
    expect(isBinaryContentType(null)).to.equal(false);
  });
});
