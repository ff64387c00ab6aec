// TtlCache: entries expire after their time to live; the requests that miss an entry at the same moment share one
// load, a load started before a clear does not fill the cache, and a value `keep` refuses is not kept.
import { expect } from "chai";
import { TtlCache } from "../../src/lib/ttl-cache.ts";

describe("TtlCache", () => {
  it("loads an entry once for the callers that miss it together, and again once it expired", async () => {
    const cache = new TtlCache<string, number>(1000);
    let loads = 0;
    const load = async () => {
      loads += 1;
      await new Promise((resolve) => setTimeout(resolve, 10));
      return loads;
    };
    expect(await Promise.all([cache.getOrLoad("k", 0, load), cache.getOrLoad("k", 0, load), cache.getOrLoad("k", 5, load)])).to.deep.equal([1, 1, 1]);
    expect(await cache.getOrLoad("k", 999, load)).to.equal(1);
    expect(await cache.getOrLoad("k", 1000, load)).to.equal(2);
    expect(loads).to.equal(2);
  });

  it("does not keep what a load started before a clear answers, nor a value `keep` refuses", async () => {
    const cache = new TtlCache<string, string>(1000);
    let release: (value: string) => void = () => {};
    const before = cache.getOrLoad("k", 0, () => new Promise<string>((resolve) => (release = resolve)));
    cache.clear();
    const after = cache.getOrLoad("k", 0, async () => "after the change");
    release("before the change");
    expect(await before).to.equal("before the change");
    expect(await after).to.equal("after the change");
    expect(cache.get("k", 1)).to.equal("after the change");

    expect(
      await cache.getOrLoad(
        "unknown",
        0,
        async () => "refused",
        (value) => value !== "refused",
      ),
    ).to.equal("refused");
    expect(cache.get("unknown", 1)).to.equal(undefined);
  });
});
