// Phone numbers that no other call of the test process has used, so users never collide by accident.
let counter = 0;

/** `+1415` and seven digits, E.164. */
export function uniquePhone(): string {
  counter += 1;
  return `+1415${2_000_000 + counter}`;
}

/** `+1415`, three digits of this process's count, then `suffix` (four digits): for the phones a rule singles out by ending. */
export function uniquePhoneEnding(suffix: string): string {
  counter += 1;
  return `+1415${String(counter % 1000).padStart(3, "0")}${suffix}`;
}
