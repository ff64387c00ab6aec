// Strict parsing of the date and date-time strings the API accepts, and the one timestamp format it emits.
// `Date.parse` is too lenient (it accepts "2026-02-30", missing offsets, local times), so the grammar is
// checked here field by field.

const DATE_TIME_PATTERN = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;
const CALENDAR_DATE_PATTERN = /^(\d{4})-(\d{2})-(\d{2})$/;

function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

function isRealDate(year: number, month: number, day: number): boolean {
  return month >= 1 && month <= 12 && day >= 1 && day <= daysInMonth(year, month);
}

/** Milliseconds since the epoch of a UTC wall-clock time; years 0..99 are not shifted to 19xx as Date.UTC would. */
function utcMillis(year: number, month: number, day: number, hour = 0, minute = 0, second = 0, ms = 0): number {
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute, second, ms);
  return date.getTime();
}

/**
 * Parses an RFC 3339 date-time (`YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)`); null when the text is not one.
 * The offset is required (a time without one names no instant). Leap seconds (`:60`) are refused because
 * a Date cannot hold them; fractions beyond milliseconds are truncated.
 */
export function parseDateTime(value: string): Date | null {
  const match = DATE_TIME_PATTERN.exec(value);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [number, number, number, number, number, number];
  if (!isRealDate(year, month, day) || hour > 23 || minute > 59 || second > 59) return null;
  const millis = match[7] === undefined ? 0 : Number(match[7].slice(0, 3).padEnd(3, "0"));

  let offsetMinutes = 0;
  if (match[8] === undefined) {
    const offsetHours = Number(match[10]);
    const offsetMins = Number(match[11]);
    if (offsetHours > 23 || offsetMins > 59) return null;
    offsetMinutes = (match[9] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMins);
  }
  const instant = utcMillis(year, month, day, hour, minute, second, millis) - offsetMinutes * 60_000;
  const date = new Date(instant);
  return Number.isNaN(date.getTime()) ? null : date;
}

/** True for `YYYY-MM-DD` naming a real day of the (proleptic) Gregorian calendar. */
export function isCalendarDate(value: string): boolean {
  const match = CALENDAR_DATE_PATTERN.exec(value);
  if (!match) return false;
  return isRealDate(Number(match[1]), Number(match[2]), Number(match[3]));
}

/** The API's timestamp format: RFC 3339 in UTC with milliseconds, e.g. `2026-11-22T08:40:00.000Z`. */
export function formatTimestamp(date: Date): string {
  return date.toISOString();
}
