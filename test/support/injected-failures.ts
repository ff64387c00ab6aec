// A failure injected into one write of a running service, for the tests of runs that fail with a 5xx before or
// after their write (the key is then left for the retry to resume).

/**
 * The next call of `target[method]` fails with an unexpected error (a 500 to its caller): `before` its write
 * (nothing is written) or `after` it (written, unanswered). Later calls run as usual.
 */
export function failNextCall<T extends object>(target: T, method: keyof T & string, when: "before" | "after"): void {
  const original = target[method] as (...args: unknown[]) => Promise<unknown>;
  (target as Record<string, unknown>)[method] = async (...args: unknown[]) => {
    (target as Record<string, unknown>)[method] = original;
    if (when === "after") await original.apply(target, args);
    throw new Error(`injected failure ${when} ${method}`);
  };
}
