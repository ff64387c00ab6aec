// The `grpc-message` header as the gRPC spec writes it: the UTF-8 bytes of the message, with only the bytes
// outside 0x20-0x7E and "%" percent-encoded. Connect encodes it with encodeURIComponent, which every decoder
// reads back except grpc-js's (decodeURI leaves "%3A", "%2B", "%2C" ... as they are); this form reads back
// exactly in grpc-js, grpc-go, grpcurl and Connect's clients alike.
const PLAIN = /^[\x20-\x24\x26-\x7e]*$/;

export function encodeGrpcMessage(message: string): string {
  if (PLAIN.test(message)) return message;
  let encoded = "";
  for (const byte of Buffer.from(message, "utf8")) {
    encoded += byte >= 0x20 && byte <= 0x7e && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`;
  }
  return encoded;
}

/** A `grpc-message` value Connect wrote (encodeURIComponent), re-encoded as gRPC defines it (above). */
export function respecGrpcMessage(connectEncoded: string): string {
  let message: string;
  try {
    message = decodeURIComponent(connectEncoded);
  } catch {
    return connectEncoded;
  }
  return encodeGrpcMessage(message);
}
