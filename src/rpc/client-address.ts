// The caller's network address, handed to RPC handlers so anonymous calls can be rate limited per address.
import { createContextKey, createContextValues, type ContextValues } from "@connectrpc/connect";

export const clientAddressKey = createContextKey<string>("unknown", { description: "client address" });

export function clientAddressValues(address: string | undefined): ContextValues {
  return createContextValues().set(clientAddressKey, address ?? "unknown");
}
