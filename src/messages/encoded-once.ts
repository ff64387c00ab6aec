// A message encoded once for many binary readers (the streams of one project): it carries its encoding, which the
// binary encoder copies as it is, instead of walking the message again for every reader. Binary codecs only: the
// JSON encoder has no use for bytes and would write an empty message.
import { create, type DescMessage, type Message, type MessageShape, toBinary } from "@bufbuild/protobuf";
import { BinaryReader } from "@bufbuild/protobuf/wire";

/** Each message `encodedOnce` made, with its whole encoding (`encodingOf`). */
const encodings = new WeakMap<Message, Uint8Array>();

/**
 * `message` as a message of `schema` that carries its binary encoding, made now. The encoding is kept as ONE unknown
 * field: the first field's number and wire type, then every byte after that tag, the other fields' included. The
 * encoder writes an unknown field as its tag and then its bytes, so the message is written as it was encoded, in one
 * copy per reader (the fields one by one, a 64-event message's 65 unknown fields, took two to three times as long).
 * Nothing reads these fields one by one: a reader decodes the bytes the encoder writes.
 */
export function encodedOnce<Desc extends DescMessage>(schema: Desc, message: MessageShape<Desc>): MessageShape<Desc> {
  const bytes = toBinary(schema, message);
  const encoded = create(schema);
  encodings.set(encoded, bytes);
  if (bytes.length === 0) return encoded;
  const reader = new BinaryReader(bytes);
  const [no, wireType] = reader.tag();
  encoded.$unknown = [{ no, wireType, data: bytes.subarray(reader.pos) }];
  return encoded;
}

/**
 * The whole encoding of a message made by `encodedOnce`, for a writer that frames the bytes itself (a gRPC stream,
 * once for all its readers); undefined for any other message. Such a message is not changed after it is made.
 */
export function encodingOf(message: Message): Uint8Array | undefined {
  return encodings.get(message);
}

/** Whether a call's content type names a binary (protobuf) codec: gRPC's, gRPC-Web's (also as text), Connect's. */
export function isBinaryContentType(contentType: string | null): boolean {
  return contentType !== null && !/[+/]json(;|$)/i.test(contentType);
}
