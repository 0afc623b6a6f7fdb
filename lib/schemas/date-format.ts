/**
 * ajv-formats' `date` (full mode, dist/formats.js), its own module so a standalone validator using
 * only `date` requires no other format (lib/schemas/string-formats.ts has them all; checked against
 * ajv-formats by scripts/compile-schemas.ts).
 */

function isLeapYear(year: number): boolean {
  // https://tools.ietf.org/html/rfc3339#appendix-C
  return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0);
}

const DATE = /^(\d\d\d\d)-(\d\d)-(\d\d)$/;
const DAYS = [0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function date(str: string): boolean {
  // full-date from http://tools.ietf.org/html/rfc3339#section-5.6
  const matches = DATE.exec(str);
  if (!matches) return false;
  const year = +matches[1]!;
  const month = +matches[2]!;
  const day = +matches[3]!;
  return month >= 1 && month <= 12 && day >= 1 && day <= (month === 2 && isLeapYear(year) ? 29 : DAYS[month]!);
}
