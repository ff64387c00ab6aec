// A message encoded once for many binary readers (the streams of one project): its fields are kept as their wire
// bytes, which the binary encoder copies as they are, instead of walking the message again for every reader. Binary
// codecs only: the JSON encoder has no use for bytes and would write an empty message.
import { create, type DescMessage, fromBinary, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { EmptySchema } from "@bufbuild/protobuf/wkt";

/** `message` as a message of `schema` that carries its fields as their binary encoding, made now. */
export function encodedOnce<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): MessageShape<Desc> {
  // A message type without fields reads every field as unknown, keeping each one's bytes.
  const { $unknown } = fromBinary(EmptySchema, toBinary(schema, message));
  const encoded = create(schema);
  if ($unknown !== undefined) encoded.$unknown = $unknown;
  return encoded;
}

/** Whether a call's content type names a binary (protobuf) codec: gRPC's, gRPC-Web's (also as text), Connect's. */
export function isBinaryContentType(contentType: string | null): boolean {
  return contentType !== null && !/[+/]json(;|$)/i.test(contentType);
}
