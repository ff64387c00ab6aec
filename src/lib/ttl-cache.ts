// A small in-process cache whose entries expire: for settings read on every request (keys, signup flows,
// project options) that change rarely. Changes made through this process clear it at once; changes made by
// another instance are seen within the time to live.
export class TtlCache<K, V> {
  private readonly entries = new Map<K, { value: V; expiresAt: number }>();
  /** Loads under way, by key: the requests that miss an entry at the same moment share one load. */
  private readonly loading = new Map<K, Promise<V>>();
  /** Bumped by `clear`: a load that started before it does not fill the cache. */
  private generation = 0;

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

  /**
   * Answers the cached value, or loads, caches (when `keep` says so) and answers it. Callers that miss while a load
   * of the same key is under way wait for that load: an entry that expires under load is read once, not once per
   * request in flight.
   */
  getOrLoad(key: K, now: number, load: () => Promise<V>, keep: (value: V) => boolean = () => true): Promise<V> {
    const cached = this.get(key, now);
    if (cached !== undefined) return Promise.resolve(cached);
    const under = this.loading.get(key);
    if (under) return under;
    const generation = this.generation;
    const loaded = load().then((value) => {
      if (generation === this.generation && keep(value)) this.set(key, value, now);
      return value;
    });
    this.loading.set(key, loaded);
    const done = () => {
      if (this.loading.get(key) === loaded) this.loading.delete(key);
    };
    loaded.then(done, done);
    return loaded;
  }

  clear(): void {
    this.entries.clear();
    this.loading.clear();
    this.generation += 1;
  }
}
