/**
 * The JSON Schema `format`s the request schemas use, as ajv-formats 3.0.1 (full mode) defines them
 * (dist/formats.js: `date`, `date-time` with a required time zone, `email`), so the validators carry
 * them without ajv-formats (~7.5 KB, every format) in a Lambda bundle. scripts/compile-schemas.ts
 * checks them against the installed ajv-formats on every compile (the regular expressions equal,
 * the functions giving the same answer on strings around every boundary) and refuses a schema using
 * any other format.
 */
import { date } from './date-format';

const TIME = /^(\d\d):(\d\d):(\d\d(?:\.\d+)?)(z|([+-])(\d\d)(?::?(\d\d))?)?$/i;

/** ajv-formats' `time` with strictTimeZone true (the only form `date-time` uses). */
function timeWithZone(str: string): boolean {
  const matches = TIME.exec(str);
  if (!matches) return false;
  const hr = +matches[1]!;
  const min = +matches[2]!;
  const sec = +matches[3]!;
  const tz = matches[4];
  const tzSign = matches[5] === '-' ? -1 : 1;
  const tzH = +(matches[6] || 0);
  const tzM = +(matches[7] || 0);
  if (tzH > 23 || tzM > 59 || !tz) return false;
  if (hr <= 23 && min <= 59 && sec < 60) return true;
  // leap second
  const utcMin = min - tzM * tzSign;
  const utcHr = hr - tzH * tzSign - (utcMin < 0 ? 1 : 0);
  return (utcHr === 23 || utcHr === -1) && (utcMin === 59 || utcMin === -1) && sec < 61;
}

const DATE_TIME_SEPARATOR = /t|\s/i;

function dateTime(str: string): boolean {
  // http://tools.ietf.org/html/rfc3339#section-5.6
  const parts = str.split(DATE_TIME_SEPARATOR);
  return parts.length === 2 && date(parts[0]!) && timeWithZone(parts[1]!);
}

/** ajv-formats' `email` (full mode), character for character. */
export const EMAIL = /^[a-z0-9!#$%&'*+/=?^_`{|}~-]+(?:\.[a-z0-9!#$%&'*+/=?^_`{|}~-]+)*@(?:[a-z0-9](?:[a-z0-9-]*[a-z0-9])?\.)+[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$/i;

/** Each supported format: true when the string has it. */
export const STRING_FORMATS: Record<string, (value: string) => boolean> = {
  date,
  'date-time': dateTime,
  email: (value) => EMAIL.test(value),
};
