// The text rule of REST string fields (domain/text.ts) applied to an RPC request message: every string field,
// nested messages and string lists included, so Connect, gRPC-Web and gRPC callers meet the same refusals.
import { ScalarType, type DescMessage, type Message } from "@bufbuild/protobuf";
import { checkText } from "../domain/text.ts";

/** Throws 422 `validation_error` (InvalidArgument) naming the first string field that is not acceptable text. */
export function checkMessageText(schema: DescMessage, message: Message, prefix = ""): void {
  const values = message as unknown as Record<string, unknown>;
  for (const field of schema.fields) {
    const param = prefix + field.name;
    let value: unknown;
    if (field.oneof !== undefined) {
      const selected = values[field.oneof.localName] as { case?: string; value?: unknown } | undefined;
      if (selected?.case !== field.localName) continue;
      value = selected.value;
    } else {
      value = values[field.localName];
    }
    if (value === undefined || value === null) continue;
    if (field.fieldKind === "scalar" && field.scalar === ScalarType.STRING) {
      checkText(param, value as string, field.name);
    } else if (field.fieldKind === "list" && field.listKind === "scalar" && field.scalar === ScalarType.STRING) {
      (value as string[]).forEach((item, index) => checkText(`${param}[${index}]`, item, field.name));
    } else if (field.fieldKind === "message" && !field.message.typeName.startsWith("google.protobuf.")) {
      checkMessageText(field.message, value as Message, `${param}.`);
    }
  }
}
