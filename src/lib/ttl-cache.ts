// A small in-process cache whose entries expire: for settings read on every request (keys, signup flows,
// project options) that change rarely. Changes made through this process clear it at once; changes made by
// another instance are seen within the time to live.
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 10_000,
  ) {}

  get(key: K, now: number): V | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return entry.value;
  }

  set(key: K, value: V, now: number): void {
    if (this.ttlMs <= 0) return;
    // A full cache starts over rather than tracking recency: simple, and bounded.
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { value, expiresAt: now + this.ttlMs });
  }

  /** Answers the cached value, or loads, caches and answers it. */
  async getOrLoad(key: K, now: number, load: () => Promise<V>): Promise<V> {
    const cached = this.get(key, now);
    if (cached !== undefined) return cached;
    const value = await load();
    this.set(key, value, now);
    return value;
  }

  clear(): void {
    this.entries.clear();
  }
}
