// Lengths as people count them.

/** Length in Unicode code points, so an emoji or an astral-plane letter counts as one character. */
export function codePointLength(value: string): number {
  let count = 0;
  for (const _ of value) count++;
  return count;
}
