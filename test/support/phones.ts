// Phone numbers that no other call of the test process has used, so users never collide by accident.
let counter = 0;

/** `+1415` and seven digits, E.164. */
export function uniquePhone(): string {
  counter += 1;
  return `+1415${2_000_000 + counter}`;
}
