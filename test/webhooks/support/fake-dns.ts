// A resolver for the service under test: names map to the addresses a test sets, anything else does not resolve.
import type { LookupAll } from "../../../src/webhooks/address-vetting.ts";

export class FakeDns {
  readonly records = new Map<string, string>();

  readonly lookup: LookupAll = async (hostname) => {
    const address = this.records.get(hostname);
    if (address === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" });
    return [{ address, family: address.includes(":") ? 6 : 4 }];
  };
}
