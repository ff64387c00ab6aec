// Unit tests of the query planner and the ordered index structure (in process, no driver).
import { expect } from "chai";
import { Query } from "mingo";
import { CollectionIndex } from "../../src/embedded-mongo/storage/collection-index.ts";
import { Collection } from "../../src/embedded-mongo/storage/collection.ts";
import { OrderedSet } from "../../src/embedded-mongo/storage/ordered-set.ts";
import { findMatches, type ExecutionStats } from "../../src/embedded-mongo/storage/planner.ts";
import { parseSort, sortDocuments } from "../../src/embedded-mongo/query/bson-order.ts";
import { Long, type Document } from "bson";

function run(coll: Collection, filter: Document, options: { sort?: Document; limit?: number; skip?: number } = {}) {
  const stats: ExecutionStats = { plan: "", keysExamined: 0, docsExamined: 0 };
  const docs = findMatches(coll, filter, { ...options, sort: parseSort(options.sort) }, stats).map((m) => m[1]);
  return { docs, stats };
}

/** The reference answer: filter every document with mingo, then sort/skip/limit. */
function bruteForce(coll: Collection, filter: Document, options: { sort?: Document; limit?: number; skip?: number } = {}) {
  const q = new Query(filter);
  let docs = sortDocuments(
    [...coll.docs.values()].filter((d) => q.test(d)),
    parseSort(options.sort),
  );
  docs = docs.slice(options.skip ?? 0, options.limit ? (options.skip ?? 0) + options.limit : undefined);
  return docs;
}

const byId = (docs: Document[]) => [...docs].sort((a, b) => a._id - b._id);

describe("embedded-mongo: ordered set", () => {
  it("stays sorted through random inserts and deletes", () => {
    const set = new OrderedSet<number>((a, b) => a - b);
    const reference: number[] = [];
    let seed = 42;
    const rand = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let i = 0; i < 20000; i++) {
      const v = Math.floor(rand() * 5000);
      if (rand() < 0.6) {
        set.insert(v);
        reference.push(v);
      } else {
        const idx = reference.indexOf(v);
        expect(set.delete(v)).to.equal(idx >= 0);
        if (idx >= 0) reference.splice(idx, 1);
      }
    }
    reference.sort((a, b) => a - b);
    expect([...set]).to.deep.equal(reference);
    expect(set.size).to.equal(reference.length);
    const back: number[] = [];
    set.backwardFrom(
      set.seek((e) => e < 2500),
      (e) => {
        back.push(e);
        return true;
      },
    );
    expect(back).to.deep.equal(reference.filter((v) => v < 2500).reverse());
  });
});

describe("embedded-mongo: query planner", () => {
  const coll = new Collection("db", "planner");
  before(() => {
    coll.addIndex(new CollectionIndex({ v: 2, key: { email: 1 }, name: "email_1", unique: true }));
    coll.addIndex(new CollectionIndex({ v: 2, key: { tenant: 1, createdAt: -1 }, name: "tenant_1_createdAt_-1" }));
    coll.addIndex(new CollectionIndex({ v: 2, key: { tags: 1 }, name: "tags_1" }));
    coll.addIndex(new CollectionIndex({ v: 2, key: { ext: 1 }, name: "ext_1", sparse: true }));
    coll.addIndex(new CollectionIndex({ v: 2, key: { phone: 1 }, name: "phone_1", unique: true, partialFilterExpression: { live: true } }));
    for (let i = 0; i < 20000; i++) {
      const doc: Document = { _id: i, email: `u${i}@x.io`, tenant: `t${i % 20}`, createdAt: new Date(1_700_000_000_000 + i * 1000), n: i % 100 };
      if (i % 7 === 0) doc.tags = [i % 3, (i % 5) + 10];
      if (i % 11 === 0) doc.ext = `e${i}`;
      doc.phone = `p${i % 1000}`;
      doc.live = i < 1000;
      coll.insert(doc);
    }
  });

  it("answers an equality on a unique index by examining one document", () => {
    const { docs, stats } = run(coll, { email: "u12345@x.io" });
    expect(docs.map((d) => d._id)).to.deep.equal([12345]);
    expect(stats.plan).to.equal("IXSCAN email_1");
    expect(stats.docsExamined).to.equal(1);
  });

  it("uses the _id index", () => {
    const { docs, stats } = run(coll, { _id: 777 });
    expect(docs).to.have.length(1);
    expect(stats.plan).to.equal("IXSCAN _id_");
    expect(stats.docsExamined).to.equal(1);
  });

  it("answers a filter pinning _id to a scalar as a scan would: the other fields tested, numbers of any type equal", () => {
    const ids = (filter: Document, options: { limit?: number; sort?: Document } = {}) =>
      findMatches(coll, filter, { ...options, sort: parseSort(options.sort) }).map(([, d]) => d._id);
    const cases: Document[] = [
      { _id: 777 },
      { _id: 777, tenant: "t17" },
      { _id: 777, tenant: "t18" },
      { _id: 777, n: { $gte: 80 } },
      { _id: 777, n: { $lt: 80 } },
      { _id: Long.fromNumber(777) },
      { _id: 777.0, $or: [{ tenant: "t1" }, { n: 77 }] },
      { _id: "777" },
      { _id: 20_001 },
    ];
    // The reference: the plan chosen among the indexes (findMatches given stats to fill plans as before).
    for (const filter of cases) {
      const planned = run(coll, filter).docs.map((d) => d._id);
      expect(ids(filter), JSON.stringify(filter)).to.deep.equal(planned);
      expect(ids(filter, { limit: 1, sort: { createdAt: -1 } }), JSON.stringify(filter)).to.deep.equal(planned);
    }
    expect(ids({ _id: 777, tenant: "t17" })).to.deep.equal([777]);
    expect(ids({ _id: Long.fromNumber(777) })).to.deep.equal([777]);
    expect(ids({ _id: 777, tenant: "t18" })).to.deep.equal([]);
  });

  it("scans only a range, and walks an index backwards for a descending sort with limit", () => {
    const r = run(coll, { _id: { $gte: 100, $lt: 150 } });
    expect(r.docs).to.have.length(50);
    expect(r.stats.docsExamined).to.equal(50);
    const top = run(coll, {}, { sort: { _id: -1 }, limit: 3 });
    expect(top.docs.map((d) => d._id)).to.deep.equal([19999, 19998, 19997]);
    expect(top.stats.docsExamined).to.equal(3);
  });

  it("uses a compound prefix: equality then the index's own order for the sort", () => {
    const r = run(coll, { tenant: "t3" }, { sort: { createdAt: -1 }, limit: 5 });
    expect(r.stats.plan).to.equal("IXSCAN tenant_1_createdAt_-1");
    expect(r.stats.docsExamined).to.equal(5);
    expect(r.docs.map((d) => d._id)).to.deep.equal([19983, 19963, 19943, 19923, 19903]);
    const range = run(coll, { tenant: "t3", createdAt: { $gte: new Date(1_700_000_000_000 + 19000 * 1000) } });
    expect(range.docs).to.have.length(50);
    expect(range.stats.docsExamined).to.equal(50);
  });

  it("reads a sort's fields the filter pins to one value as no constraint, wherever they stand, as mongod does", () => {
    const expected = [19983, 19963, 19943, 19923, 19903];
    for (const sort of [
      { tenant: 1, createdAt: -1 },
      { tenant: -1, createdAt: -1 },
      { createdAt: -1, tenant: 1 },
    ]) {
      const r = run(coll, { tenant: "t3" }, { sort, limit: 5 });
      expect(r.stats.plan, JSON.stringify(sort)).to.equal("IXSCAN tenant_1_createdAt_-1");
      expect(r.stats.docsExamined, JSON.stringify(sort)).to.equal(5);
      expect(r.docs.map((d) => d._id)).to.deep.equal(expected);
    }
    // Backwards for the reverse order; and a sort on the pinned field alone is any order of the index's.
    const ascending = run(coll, { tenant: "t3" }, { sort: { tenant: 1, createdAt: 1 }, limit: 2 });
    expect(ascending.docs.map((d) => d._id)).to.deep.equal([3, 23]);
    expect(ascending.stats.docsExamined).to.equal(2);
    expect(run(coll, { tenant: "t3" }, { sort: { tenant: 1 }, limit: 4 }).stats.docsExamined).to.equal(4);
    // A pinned field does not excuse a sort field the index does not hold next.
    expect(run(coll, { tenant: "t3" }, { sort: { tenant: 1, n: 1 }, limit: 5 }).stats.docsExamined).to.equal(1000);
  });

  it("uses $in points and keeps multikey results unique", () => {
    const r = run(coll, { tags: { $in: [0, 10] } });
    expect(r.stats.plan).to.equal("IXSCAN tags_1");
    expect(byId(r.docs)).to.deep.equal(bruteForce(coll, { tags: { $in: [0, 10] } }));
  });

  it("does not intersect two-sided ranges on a multikey index (element-wise semantics)", () => {
    const c = new Collection("db", "multikey");
    c.addIndex(new CollectionIndex({ v: 2, key: { a: 1 }, name: "a_1" }));
    c.insert({ _id: 1, a: [1, 20] });
    c.insert({ _id: 2, a: [7] });
    c.insert({ _id: 3, a: 30 });
    expect(byId(run(c, { a: { $gt: 5, $lt: 10 } }).docs).map((d) => d._id)).to.deep.equal([1, 2]);
    expect(run(c, { $and: [{ a: 1 }, { a: 20 }] }).docs.map((d) => d._id)).to.deep.equal([1]);
    expect(byId(run(c, { $and: [{ a: { $gt: 5 } }, { a: { $lt: 10 } }] }).docs).map((d) => d._id)).to.deep.equal([1, 2]);
    expect(run(c, { $and: [{ a: 1 }, { a: { $gt: 10 } }] }).docs.map((d) => d._id)).to.deep.equal([1]);
  });

  it("does not answer null lookups from a sparse index", () => {
    const r = run(coll, { ext: null }, { limit: 3 });
    expect(r.docs.map((d) => d._id)).to.deep.equal([1, 2, 3]);
    const hit = run(coll, { ext: "e22" });
    expect(hit.stats.plan).to.equal("IXSCAN ext_1");
  });

  it("uses a partial index only when the query implies its filter", () => {
    expect(run(coll, { phone: "p5", live: true }).stats.plan).to.equal("IXSCAN phone_1");
    const typed = new Collection("db", "typed_partial");
    typed.addIndex(
      new CollectionIndex({ v: 2, key: { ext: 1 }, name: "ext_1", unique: true, partialFilterExpression: { ext: { $type: "string" } } }),
    );
    for (let i = 0; i < 10; i++) typed.insert({ _id: i, ext: i % 2 ? `e${i}` : null });
    const implied = run(typed, { ext: "e3" });
    expect(implied.stats.plan).to.equal("IXSCAN ext_1");
    expect(implied.docs.map((d) => d._id)).to.deep.equal([3]);
    expect(run(typed, { ext: null }).stats.plan).to.equal("COLLSCAN");
    expect(run(typed, { ext: null }).docs).to.have.length(5);
    const r = run(coll, { phone: "p5" });
    expect(r.stats.plan).to.not.equal("IXSCAN phone_1");
    expect(r.docs).to.have.length(20);
  });

  it("prefers a partial index whose filter answers a condition of the query that its keys do not", () => {
    // The relay's sweep: events not fanned out, oldest first. Both indexes give the range and the order; only the
    // partial one holds just the events not fanned out, where the other walks past every one fanned out.
    const events = new Collection("db", "partial_preferred");
    events.addIndex(new CollectionIndex({ v: 2, key: { created_at: 1 }, name: "retention" }));
    events.addIndex(
      new CollectionIndex({ v: 2, key: { created_at: 1, _id: 1 }, name: "fan_out_pending", partialFilterExpression: { fanned_out: false } }),
    );
    for (let i = 0; i < 1000; i++) events.insert({ _id: i, created_at: new Date(1_700_000_000_000 + i), fanned_out: i < 990 });
    const filter = { fanned_out: false, created_at: { $lte: new Date(1_700_000_000_000 + 995) } };
    const r = run(events, filter, { sort: { created_at: 1 }, limit: 100 });
    expect(r.stats.plan).to.equal("IXSCAN fan_out_pending");
    expect(r.stats.keysExamined).to.equal(6);
    expect(r.docs.map((d) => d._id)).to.deep.equal([990, 991, 992, 993, 994, 995]);
    expect(r.docs).to.deep.equal(bruteForce(events, filter, { sort: { created_at: 1 }, limit: 100 }));
  });

  it("agrees with a brute-force scan on assorted filters and sorts", () => {
    const cases: [Document, { sort?: Document; limit?: number; skip?: number }][] = [
      [{ n: { $gt: 10, $lte: 12 } }, { sort: { _id: 1 } }],
      [
        { tenant: { $in: ["t1", "t2"] }, n: { $lt: 5 } },
        { sort: { createdAt: 1 }, limit: 7 },
      ],
      [{ email: { $gte: "u199" } }, { sort: { email: -1 }, skip: 2, limit: 4 }],
      [{ $and: [{ tenant: "t4" }, { createdAt: { $lt: new Date(1_700_000_000_000 + 500_000) } }] }, { sort: { _id: -1 } }],
      [{ tags: 11 }, { sort: { _id: 1 }, limit: 10 }],
      [{ tenant: "t5", $or: [{ n: 5 }, { n: 45 }] }, {}],
      [{ email: { $in: ["u1@x.io", "u2@x.io", "nope"] } }, { sort: { _id: 1 } }],
      [{ _id: { $gt: 19990 } }, { sort: { n: -1, _id: 1 } }],
      [{ tenant: "t7" }, { sort: { createdAt: 1, tenant: -1 }, skip: 3, limit: 6 }],
      [{ tenant: "t7", createdAt: { $lt: new Date(1_700_000_000_000 + 900_000) } }, { sort: { tenant: 1, createdAt: -1 } }],
    ];
    for (const [filter, options] of cases) {
      // Without a sort the order is unspecified (index order, as with mongod), so compare as sets then.
      const got = run(coll, filter, options).docs;
      expect(options.sort ? got : byId(got), JSON.stringify(filter)).to.deep.equal(bruteForce(coll, filter, options));
    }
  });

  it("unique lookups agree across numeric types and fall back for keys without canonical strings", () => {
    const c = new Collection("db", "hash");
    c.addIndex(new CollectionIndex({ v: 2, key: { k: 1 }, name: "k_1", unique: true }));
    c.insert({ _id: 1, k: 5 });
    c.insert({ _id: 2, k: Long.fromString("9007199254740993") });
    c.insert({ _id: 3, k: 0 });
    expect(run(c, { k: 5.0 }).docs.map((d) => d._id)).to.deep.equal([1]);
    expect(run(c, { k: -0 }).docs.map((d) => d._id)).to.deep.equal([3]);
    expect(run(c, { k: Long.fromString("9007199254740993") }).docs.map((d) => d._id)).to.deep.equal([2]);
    expect(() => c.insert({ _id: 4, k: Long.fromNumber(5) })).to.throw(/E11000/);
    // An embedded-document key has no canonical string: the ordered set answers from then on.
    c.insert({ _id: 5, k: { nested: true } });
    expect(() => c.insert({ _id: 6, k: { nested: true } })).to.throw(/E11000/);
    expect(run(c, { k: 5 }).docs.map((d) => d._id)).to.deep.equal([1]);
    c.remove(5);
    expect(() => c.insert({ _id: 7, k: 0 })).to.throw(/E11000/);
  });

  it("unique lookups tell a string key from a value whose canonical string it spells, and forget a removed string", () => {
    const c = new Collection("db", "strings");
    c.addIndex(new CollectionIndex({ v: 2, key: { k: 1 }, name: "k_1", unique: true }));
    // n5, sx, z: the canonical strings of 5, "x" and null, which a one-field string key is held beside.
    for (const [id, k] of [
      [1, 5],
      [2, "n5"],
      [3, "x"],
      [4, "sx"],
      [5, null],
      [6, "z"],
    ] as const)
      c.insert({ _id: id, k });
    for (const [k, id] of [
      [5, 1],
      ["n5", 2],
      ["x", 3],
      ["sx", 4],
      [null, 5],
      ["z", 6],
    ] as const)
      expect(
        run(c, { k }).docs.map((d) => d._id),
        String(k),
      ).to.deep.equal([id]);
    expect(() => c.insert({ _id: 7, k: "n5" })).to.throw(/E11000.*k: "n5"/);
    expect(() => c.insert({ _id: 7, k: Long.fromNumber(5) })).to.throw(/E11000/);
    c.remove(c.ridsById(4)[0]!);
    expect(run(c, { k: "sx" }).docs).to.deep.equal([]);
    c.insert({ _id: 8, k: "sx" });
    expect(run(c, { k: "sx" }).docs.map((d) => d._id)).to.deep.equal([8]);
  });
});

describe("embedded-mongo: query planner, $or branch by branch", () => {
  // Agenda's due-job query: a job of this name, not disabled, either unlocked and due or locked before the lock
  // deadline, the earliest (then highest priority) first.
  const now = new Date(1_800_000_000_000);
  const due = (scanAt: Date, deadline: Date) => ({
    name: "job",
    disabled: { $ne: true },
    $or: [{ lockedAt: { $eq: null }, nextRunAt: { $lte: scanAt } }, { lockedAt: { $lte: deadline } }],
  });
  const sort = { nextRunAt: 1, priority: -1 };
  function jobs(withBranchIndex: boolean): Collection {
    const c = new Collection("db", "jobs");
    // The index Agenda creates itself, and the one the application adds for the $or's branches.
    c.addIndex(
      new CollectionIndex({ v: 2, key: { name: 1, nextRunAt: 1, priority: -1, lockedAt: 1, disabled: 1 }, name: "findAndLockNextJobIndex" }),
    );
    if (withBranchIndex) c.addIndex(new CollectionIndex({ v: 2, key: { name: 1, lockedAt: 1, nextRunAt: 1, priority: -1 }, name: "due" }));
    let id = 0;
    // 3,000 locked and running (due, locked a second ago), 2,000 due and free, 1,000 later, 5 with a lost lock,
    // 50 disabled, 1,000 of another name.
    for (let i = 0; i < 3000; i++)
      c.insert({
        _id: id++,
        name: "job",
        nextRunAt: new Date(now.getTime() - 100_000 + i * 10),
        lockedAt: new Date(now.getTime() - 1000),
        priority: 0,
      });
    for (let i = 0; i < 2000; i++)
      c.insert({ _id: id++, name: "job", nextRunAt: new Date(now.getTime() - 4000 + i), lockedAt: null, priority: i % 3 });
    for (let i = 0; i < 1000; i++) c.insert({ _id: id++, name: "job", nextRunAt: new Date(now.getTime() + 60_000 + i), priority: 0 });
    for (let i = 0; i < 5; i++) c.insert({ _id: id++, name: "job", nextRunAt: null, lockedAt: new Date(now.getTime() - 600_000 - i), priority: i });
    for (let i = 0; i < 50; i++)
      c.insert({ _id: id++, name: "job", nextRunAt: new Date(now.getTime() - 9000 + i), lockedAt: null, disabled: true, priority: 5 });
    for (let i = 0; i < 1000; i++)
      c.insert({ _id: id++, name: "other", nextRunAt: new Date(now.getTime() - 20_000 + i), lockedAt: null, priority: 0 });
    return c;
  }

  it("answers Agenda's due-job query with one index scan per branch and few documents examined", () => {
    const c = jobs(true);
    const filter = due(now, new Date(now.getTime() - 60_000));
    const { docs, stats } = run(c, filter, { sort, limit: 1 });
    expect(docs).to.deep.equal(bruteForce(c, filter, { sort, limit: 1 }));
    // A job with a lost lock has nextRunAt null, which sorts first.
    expect(docs[0]!.nextRunAt).to.equal(null);
    expect(stats.plan).to.equal("OR");
    expect(stats.branches!.map((b) => [b.index.name, b.sorted])).to.deep.equal([
      ["due", true],
      ["due", false],
    ]);
    // The 5 lost locks, then the 50 disabled jobs (due earlier, rejected by the filter) and the first due one.
    expect(stats.docsExamined).to.equal(56);
    // Without lost locks: the earliest due free job, still without walking the 3,000 locked ones.
    const fresh = due(now, new Date(now.getTime() - 3_600_000));
    const first = run(c, fresh, { sort, limit: 1 });
    expect(first.docs).to.deep.equal(bruteForce(c, fresh, { sort, limit: 1 }));
    expect(first.docs[0]!._id).to.equal(3000);
    expect(first.stats.docsExamined).to.equal(51);
  });

  it("reads only the named documents when keys of a unique index stand beside the $or (a batch lock's update)", () => {
    const c = jobs(true);
    const filter = { ...due(now, new Date(now.getTime() - 60_000)), _id: { $in: [2999, 3000, 3001, 5999, 7000] } };
    const { docs, stats } = run(c, filter, { sort });
    expect(docs).to.deep.equal(bruteForce(c, filter, { sort }));
    expect(docs.map((d) => d._id)).to.deep.equal([3000, 3001]);
    expect(stats.plan).to.equal("IXSCAN _id_");
    expect(stats.docsExamined).to.equal(5);
  });

  it("keeps the single index when a branch could not use more of the filter than the predicates beside the $or", () => {
    const c = jobs(false);
    const filter = due(now, new Date(now.getTime() - 60_000));
    const { docs, stats } = run(c, filter, { sort, limit: 1 });
    expect(stats.plan).to.equal("IXSCAN findAndLockNextJobIndex");
    expect(docs).to.deep.equal(bruteForce(c, filter, { sort, limit: 1 }));
  });

  it("agrees with a brute-force scan on $or filters, sorted or not, with skip and limit", () => {
    const c = jobs(true);
    c.addIndex(new CollectionIndex({ v: 2, key: { priority: 1 }, name: "priority_1" }));
    const cases: [Document, { sort?: Document; limit?: number; skip?: number }][] = [
      [due(now, new Date(now.getTime() - 60_000)), { sort, limit: 20 }],
      [due(now, new Date(now.getTime() - 60_000)), { sort: { nextRunAt: -1, priority: 1 }, skip: 3, limit: 7 }],
      [due(now, now), { sort, skip: 2990, limit: 30 }],
      [due(now, now), {}],
      [{ $or: [{ name: "other" }, { priority: 2 }, { name: "job", lockedAt: null }] }, {}],
      [{ $or: [{ name: "other" }, { priority: 2 }] }, { sort: { _id: -1 }, limit: 15 }],
      [{ $or: [{ name: "job", lockedAt: { $exists: false } }, { priority: { $gte: 2 } }] }, { sort: { nextRunAt: 1, _id: 1 }, limit: 50 }],
      [
        { name: "job", $or: [{ lockedAt: null, nextRunAt: { $gt: now } }, { disabled: true }] },
        { sort, limit: 5 },
      ],
    ];
    for (const [filter, options] of cases) {
      const got = run(c, filter, options).docs;
      expect(options.sort ? got : byId(got), JSON.stringify(filter)).to.deep.equal(bruteForce(c, filter, options));
    }
  });
});
