// The text decoder of JSON request messages (src/rpc/json-number-strings.ts) on a message with every shape a number
// can take: 64- and 32-bit integers, floats, lists, maps with integer keys, wrappers, nested and repeated messages.
// A number given as a string must be a decimal literal (integers: of a whole value), else 422 validation_error
// naming the dotted field; what it lets through is what protobuf-es then reads.
import { create, createFileRegistry, fromJsonString, type DescMessage } from "@bufbuild/protobuf";
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
  file_google_protobuf_wrappers,
  StructSchema,
} from "@bufbuild/protobuf/wkt";
import { Code, ConnectError } from "@connectrpc/connect";
import { expect } from "chai";
import { ErrorInfoSchema } from "../../gen/google/rpc/error_details_pb.ts";
import { numberCheckingTextDecoder } from "../../src/rpc/json-number-strings.ts";

const {
  INT64: TYPE_INT64,
  UINT64: TYPE_UINT64,
  INT32: TYPE_INT32,
  UINT32: TYPE_UINT32,
  DOUBLE: TYPE_DOUBLE,
  FLOAT: TYPE_FLOAT,
  STRING: TYPE_STRING,
  MESSAGE: TYPE_MESSAGE,
  BOOL: TYPE_BOOL,
} = FieldDescriptorProto_Type;
const { OPTIONAL: LABEL_OPTIONAL, REPEATED: LABEL_REPEATED } = FieldDescriptorProto_Label;

/** A field as protoc describes it, its JSON name included. */
function field(name: string, number: number, type: FieldDescriptorProto_Type, extra: { label?: FieldDescriptorProto_Label; typeName?: string } = {}) {
  const jsonName = name.replace(/_([a-z])/g, (_, letter: string) => letter.toUpperCase());
  return { name, number, type, label: LABEL_OPTIONAL, jsonName, ...extra };
}

function mapEntry(name: string, key: FieldDescriptorProto_Type, value: FieldDescriptorProto_Type, valueType?: string) {
  return {
    name,
    field: [field("key", 1, key), field("value", 2, value, valueType ? { typeName: valueType } : {})],
    options: { mapEntry: true },
  };
}

const file = create(FileDescriptorProtoSchema, {
  name: "probe.proto",
  package: "probe",
  syntax: "proto3",
  dependency: ["google/protobuf/wrappers.proto"],
  messageType: [
    {
      name: "Probe",
      field: [
        field("big", 1, TYPE_INT64),
        field("ubig", 2, TYPE_UINT64),
        field("small", 3, TYPE_INT32),
        field("ratio", 4, TYPE_DOUBLE),
        field("single", 5, TYPE_FLOAT),
        field("counts", 6, TYPE_INT32, { label: LABEL_REPEATED }),
        field("ratios", 7, TYPE_DOUBLE, { label: LABEL_REPEATED }),
        field("by_number", 8, TYPE_MESSAGE, { label: LABEL_REPEATED, typeName: ".probe.Probe.ByNumberEntry" }),
        field("weights", 9, TYPE_MESSAGE, { label: LABEL_REPEATED, typeName: ".probe.Probe.WeightsEntry" }),
        field("wrapped", 10, TYPE_MESSAGE, { typeName: ".google.protobuf.Int64Value" }),
        field("wrapped_ratio", 11, TYPE_MESSAGE, { typeName: ".google.protobuf.DoubleValue" }),
        field("child", 12, TYPE_MESSAGE, { typeName: ".probe.Probe" }),
        field("children", 13, TYPE_MESSAGE, { label: LABEL_REPEATED, typeName: ".probe.Probe" }),
        field("name", 14, TYPE_STRING),
        field("named", 15, TYPE_MESSAGE, { label: LABEL_REPEATED, typeName: ".probe.Probe.NamedEntry" }),
        field("wrapped_list", 16, TYPE_MESSAGE, { label: LABEL_REPEATED, typeName: ".google.protobuf.UInt32Value" }),
        field("flag", 17, TYPE_BOOL),
        field("count", 18, TYPE_UINT32),
      ],
      nestedType: [
        mapEntry("ByNumberEntry", TYPE_INT32, TYPE_STRING),
        mapEntry("WeightsEntry", TYPE_STRING, TYPE_DOUBLE),
        mapEntry("NamedEntry", TYPE_STRING, TYPE_MESSAGE, ".probe.Probe"),
      ],
    },
    { name: "Words", field: [field("name", 1, TYPE_STRING), field("flag", 2, TYPE_BOOL)] },
  ],
});
const registry = createFileRegistry(file, (name) => (name === "google/protobuf/wrappers.proto" ? file_google_protobuf_wrappers : undefined));
const Probe = registry.getMessage("probe.Probe")!;
const Words = registry.getMessage("probe.Words")!;

/** The text protobuf-es gets for `json` sent as a request of `schema`. */
function decoded(json: string, schema: DescMessage = Probe): string {
  return numberCheckingTextDecoder(schema).decode(new TextEncoder().encode(json));
}

/** The message protobuf-es reads from what the decoder lets through. */
function read(json: unknown): any {
  return fromJsonString(Probe, decoded(JSON.stringify(json)));
}

/**
 * The decoder's refusal of `json`, as Connect answers it (it runs inside Connect's codec, before any interceptor):
 * InvalidArgument with the ErrorInfo of 422 validation_error naming `param`.
 */
function refused(json: unknown, param: string, message?: RegExp): void {
  let thrown: unknown;
  try {
    decoded(JSON.stringify(json));
  } catch (error) {
    thrown = error;
  }
  expect(thrown, `expected a refusal naming ${param}`).to.be.instanceOf(ConnectError);
  const error = thrown as ConnectError;
  expect(error.code).to.equal(Code.InvalidArgument);
  const info = error.findDetails(ErrorInfoSchema)[0];
  expect([info?.reason, info?.metadata.param]).to.deep.equal(["validation_error", param]);
  if (message) expect(error.rawMessage).to.match(message);
}

describe("numbers given as strings in JSON request messages", () => {
  it("refuses what is no decimal literal in every numeric field, naming it (snake_case, dotted, indexed)", () => {
    for (const text of ["0x10", "0b11", "0o7", " 5", "5 ", "+5", ".5", "5.", "01", "", "1_0", "\u0665"]) {
      refused({ big: text }, "big");
      refused({ ubig: text }, "ubig");
      refused({ small: text }, "small");
      refused({ count: text }, "count");
      refused({ ratio: text }, "ratio");
      refused({ single: text }, "single");
      refused({ counts: [1, text] }, "counts[1]");
      refused({ ratios: ["1.5", text] }, "ratios[1]");
      refused({ weights: { a: text } }, "weights.a");
      refused({ wrapped: text }, "wrapped");
      refused({ wrapped_ratio: text }, "wrapped_ratio");
      refused({ wrapped_list: ["3", text] }, "wrapped_list[1]");
      refused({ child: { big: text } }, "child.big");
      refused({ children: [{}, { child: { small: text } }] }, "children[1].child.small");
      refused({ named: { x: { ratio: text } } }, "named.x.ratio");
      refused({ wrappedRatio: text }, "wrapped_ratio");
      refused({ byNumber: { [text]: "x" } }, `by_number.${text}`);
    }
  });

  it("integers: a literal of a whole value only", () => {
    for (const text of ["1.5", "1e-1", "15e-1", "NaN", "Infinity", "-Infinity"]) {
      refused({ big: text }, "big");
      refused({ small: text }, "small");
      refused({ wrapped: text }, "wrapped");
      refused({ by_number: { [text]: "x" } }, `by_number.${text}`);
    }
  });

  it("accepts decimal literals: protobuf-es reads them as the numbers they are, integers as digits", () => {
    const message = read({
      big: "1e2",
      ubig: "18446744073709551615",
      small: "-1.0e1",
      count: "0",
      ratio: "1.5",
      single: "-0.25",
      counts: ["16", 2, "3e0"],
      ratios: ["1e2", "NaN", "Infinity", "-Infinity"],
      by_number: { "1e1": "ten", "-0": "zero" },
      weights: { a: "2.5e-1" },
      wrapped: "-100.00",
      wrapped_ratio: "-1E-2",
      wrapped_list: ["7"],
      child: { big: "-9223372036854775808" },
      children: [{ small: "2147483647" }],
      named: { x: { ratio: "0" } },
    });
    expect(message.big).to.equal(100n);
    expect(message.ubig).to.equal(18446744073709551615n);
    expect(message.small).to.equal(-10);
    expect(message.count).to.equal(0);
    expect(message.ratio).to.equal(1.5);
    expect(message.single).to.equal(-0.25);
    expect(message.counts).to.deep.equal([16, 2, 3]);
    expect(message.ratios).to.deep.equal([100, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY]);
    expect(message.byNumber).to.deep.equal({ 10: "ten", 0: "zero" });
    expect(message.weights).to.deep.equal({ a: 0.25 });
    expect(message.wrapped).to.equal(-100n);
    expect(message.wrappedRatio).to.equal(-0.01);
    expect(message.wrappedList.map((w: { value: number }) => w.value)).to.deep.equal([7]);
    expect(message.child.big).to.equal(-9223372036854775808n);
    expect(message.children[0].small).to.equal(2147483647);
    expect(message.named.x.ratio).to.equal(0);
  });

  it("leaves ranges to protobuf-es, and JSON numbers, strings of string fields and the rest untouched", () => {
    expect(() => read({ small: "2147483648" })).to.throw(/cannot decode/);
    expect(() => read({ big: "1e30" })).to.throw(/cannot decode/);
    refused({ ratio: "1e400" }, "ratio", /^ratio is out of range\.$/);
    const untouched = '{"name":"0x10","small":16,"ratio":1.5,"flag":true,"big":"12","child":null,"counts":null}';
    expect(decoded(untouched)).to.equal(untouched);
  });

  it("answers the text unchanged unless an integer needs its digits, and keeps duplicate keys for protobuf-es to refuse", () => {
    const spaced = ' {\n "small": "5", "big": "7" } ';
    expect(decoded(spaced)).to.equal(spaced);
    expect(decoded("{not json")).to.equal("{not json");
    expect(decoded('["0x10"]')).to.equal('["0x10"]');
    expect(JSON.parse(decoded('{"big": "1e2"}'))).to.deep.equal({ big: "100" });
    const duplicated = '{"big": "1e2", "big": "5"}';
    expect(decoded(duplicated)).to.equal(duplicated);
    expect(() => fromJsonString(Probe, decoded(duplicated))).to.throw(/duplicate/);
  });

  it("a message that holds no number anywhere is decoded as UTF-8 alone", () => {
    expect(decoded('{"name": "0x10", "flag": true}', Words)).to.equal('{"name": "0x10", "flag": true}');
    expect(decoded('{"fields": {"a": {"stringValue": "0x10"}}}', StructSchema)).to.equal('{"fields": {"a": {"stringValue": "0x10"}}}');
  });
});
