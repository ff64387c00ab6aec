// The path of a request target, as lists report it in `url` and idempotency fingerprints name it.

/**
 * The path of a request target without its query or fragment. An absolute-form target
 * (`GET http://host/v1/... HTTP/1.1`, which HTTP/1.1 servers must accept) loses its scheme and authority, so a
 * client cannot make an answer name a host of its choosing.
 */
export function pathOf(target: string): string {
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/?#]*/.exec(target);
  const rest = authority ? target.slice(authority[0].length) : target;
  const end = rest.search(/[?#]/);
  const path = end === -1 ? rest : rest.slice(0, end);
  return path === "" ? "/" : path;
}
