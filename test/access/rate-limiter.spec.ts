// The shared quota across instances: two limiters over one database never serve more than the quota.
import { expect } from "chai";
import { RateLimiter, chunkSize } from "../../src/access/rate-limiter.ts";
import { RateLimitRepository } from "../../src/store/rate-limit-repository.ts";
import type { Database } from "../../src/store/database.ts";
import { freshDatabase } from "../support/database.ts";

describe("RateLimiter", () => {
  let database: Database;
  let now = Date.UTC(2026, 10, 22, 10, 0, 5);
  const clock = () => new Date(now);
  before(async () => {
    database = await freshDatabase("ratelimit");
  });
  after(async () => {
    await database.close();
  });

  it("reserves one request at a time when the quota is small", () => {
    expect(chunkSize(5, 0)).to.equal(1);
    expect(chunkSize(63, 0)).to.equal(1);
    expect(chunkSize(6000, 0)).to.equal(50);
    expect(chunkSize(6000, 5990)).to.equal(1);
  });

  it("serves exactly a small quota across two instances, counting down", async () => {
    const repository = new RateLimitRepository(database.db);
    const a = new RateLimiter(repository, clock);
    const b = new RateLimiter(repository, clock);
    const results = [];
    for (let i = 0; i < 8; i++) results.push(await (i % 2 ? b : a).consume("key:small", 5));
    expect(results.map((r) => r.exceeded)).to.deep.equal([false, false, false, false, false, true, true, true]);
    expect(results.slice(0, 5).map((r) => r.remaining)).to.deep.equal([4, 3, 2, 1, 0]);
    expect(results[0]!.resetSeconds).to.equal(55);
  });

  it("never serves more than a large quota across two instances under concurrency", async () => {
    const repository = new RateLimitRepository(database.db);
    const a = new RateLimiter(repository, clock);
    const b = new RateLimiter(repository, clock);
    const attempts = await Promise.all(Array.from({ length: 1500 }, (_, i) => (i % 3 ? a : b).consume("key:large", 1000)));
    const served = attempts.filter((r) => !r.exceeded).length;
    expect(served).to.be.at.most(1000);
    // What an instance may leave unspent is bounded by its last chunks.
    expect(served).to.be.at.least(1000 - 2 * 50);
  });

  it("starts a new quota with the next window", async () => {
    const repository = new RateLimitRepository(database.db);
    const limiter = new RateLimiter(repository, clock);
    for (let i = 0; i < 3; i++) await limiter.consume("key:window", 3);
    expect((await limiter.consume("key:window", 3)).exceeded).to.equal(true);
    now += 60_000;
    expect((await limiter.consume("key:window", 3)).exceeded).to.equal(false);
  });
});
