/**
 * Reading HL7 data types into the chart's shapes. Lenient where senders differ (times with or without
 * an offset, seconds or not), strict where a wrong value would be stored as true (a date that is no date
 * is dropped, never guessed).
 */
import type { Address, Clinician, CodedValue, PersonName } from '../chart/types';
import { repetitionsOf, type ParsedSegment } from '../hl7/parser';

const TS = /^(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:\.(\d{1,4}))?([+-]\d{4})?$/;

/** The zone a time stamp without an offset is read in when the partner names none (docs/hl7-intake.md). */
export const DEFAULT_TIME_ZONE = 'UTC';

/** Whether `name` is an IANA time zone this runtime knows (e.g. `America/Chicago`, `UTC`). */
export function isTimeZone(name: unknown): name is string {
  if (typeof name !== 'string' || name.trim() === '' || name.length > 64) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
    return true;
  } catch {
    return false;
  }
}

const zoneFormats = new Map<string, Intl.DateTimeFormat>();

/** Minutes east of UTC of `zone` at the instant `epochMs` (Intl: no dependency, the runtime's tz data). */
export function zoneOffsetMinutes(epochMs: number, zone: string): number {
  let format = zoneFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    zoneFormats.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(epochMs)).map((p) => [p.type, p.value]));
  const wall = Date.UTC(Number(parts.year), Number(parts.month) - 1, Number(parts.day), Number(parts.hour) % 24, Number(parts.minute), Number(parts.second));
  return Math.round((wall - Math.floor(epochMs / 1000) * 1000) / 60000);
}

/**
 * The offset (minutes east of UTC) a wall-clock time (given as if it were UTC, `wallMs`) has in `zone`.
 * A wall time in a spring-forward gap takes the offset before the gap; one in the repeated autumn hour
 * the first (daylight) occurrence.
 */
export function offsetOfWallTime(wallMs: number, zone: string): number {
  const before = zoneOffsetMinutes(wallMs - 86_400_000, zone);
  const after = zoneOffsetMinutes(wallMs + 86_400_000, zone);
  const first = zoneOffsetMinutes(wallMs - before * 60000, zone);
  if (first === before) return before;
  const second = zoneOffsetMinutes(wallMs - after * 60000, zone);
  return second === after ? after : before;
}

interface TsParts {
  y: string;
  mo?: string;
  d?: string;
  h?: string;
  mi?: string;
  s?: string;
  frac?: string;
  /** minutes east of UTC, when the value carried an offset */
  offset?: number;
  /** the wall time as if it were UTC, ms (missing parts: their start) */
  wallMs: number;
}

/** An HL7 TS/DTM split into its parts; undefined unless it is a real calendar time (1900 or later not checked here). */
function tsParts(value: string): TsParts | undefined {
  const m = TS.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, offsetText] = m as unknown as [string, string, string?, string?, string?, string?, string?, string?, string?];
  // a part is present only when every coarser part is (the regular expression allows none missing in between)
  if (frac !== undefined && s === undefined) return undefined;
  const wallMs = Date.UTC(Number(y), Number(mo ?? '01') - 1, Number(d ?? '01'), Number(h ?? '00'), Number(mi ?? '00'), Number(s ?? '00'));
  const check = new Date(wallMs);
  if (
    Number.isNaN(wallMs) ||
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo ?? '01') - 1 ||
    check.getUTCDate() !== Number(d ?? '01') ||
    Number(h ?? 0) > 23 ||
    Number(mi ?? 0) > 59 ||
    Number(s ?? 0) > 59
  )
    return undefined;
  let offset: number | undefined;
  if (offsetText) {
    const oh = Number(offsetText.slice(1, 3));
    const om = Number(offsetText.slice(3, 5));
    if (oh > 14 || om > 59) return undefined;
    offset = (offsetText[0] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  return { y, mo, d, h, mi, s, frac, offset, wallMs };
}

const isoOffset = (minutes: number): string => {
  if (minutes === 0) return 'Z';
  const abs = Math.abs(minutes);
  return `${minutes < 0 ? '-' : '+'}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
};

/**
 * HL7 TS/DTM -> ISO 8601 UTC instant (`YYYY-MM-DDTHH:mm:ss[.fff]Z`). A time stamp without an offset is
 * a wall-clock time in `timeZone` (the sending partner's zone, IANA name; default UTC; docs/hl7-intake.md);
 * with an offset, the offset wins. Missing parts are their start (a date is its local midnight).
 * Undefined when it is not a real instant or lies before 1900.
 */
export function instantFromTs(value: string, timeZone: string = DEFAULT_TIME_ZONE): string | undefined {
  const parts = tsParts(value);
  if (!parts) return undefined;
  const offset = parts.offset ?? offsetOfWallTime(parts.wallMs, timeZone);
  const ms = parts.wallMs + (parts.frac ? Number((parts.frac + '00').slice(0, 3)) : 0) - offset * 60000;
  const utc = new Date(ms);
  if (utc.getUTCFullYear() < 1900) return undefined;
  const iso = utc.toISOString();
  return parts.frac ? iso : iso.replace('.000Z', 'Z');
}

/**
 * HL7 TS/DTM -> PartialDateTime (lib/chart/types.ts) with the precision the sender wrote: `YYYY`,
 * `YYYY-MM`, `YYYY-MM-DD` (no offset: a date is a date), or a time with minutes or seconds (and the
 * fraction as written) and an offset: the sender's, else the offset `timeZone` has at that wall time.
 * An hour without minutes is written as minutes (`HH:00`), or, with `keepHour` (the lab model, whose times
 * take an hour alone), as the hour (`YYYY-MM-DDTHH±HH:MM`). Undefined when it is not a real time.
 */
export function partialFromTs(value: string, timeZone: string = DEFAULT_TIME_ZONE, keepHour = false): string | undefined {
  const parts = tsParts(value);
  if (!parts || Number(parts.y) < 1900) return undefined;
  const { y, mo, d, h, mi, s, frac } = parts;
  if (mo === undefined) return y;
  if (d === undefined) return `${y}-${mo}`;
  if (h === undefined) return `${y}-${mo}-${d}`;
  const offset = parts.offset ?? offsetOfWallTime(parts.wallMs, timeZone);
  const time = mi === undefined && keepHour ? h : `${h}:${mi ?? '00'}${s === undefined ? '' : `:${s}${frac ? `.${frac}` : ''}`}`;
  return `${y}-${mo}-${d}T${time}${isoOffset(offset)}`;
}

/**
 * HL7 TS/DTM -> ISO 8601 date-time with seconds in the sender's own offset (`20240301101500-0500` ->
 * `2024-03-01T10:15:00-05:00`; the fraction as written): the same instant as {@link instantFromTs},
 * written as the sender wrote it, so an export gives the offset back. Without an offset the time is a
 * wall-clock time in `timeZone`, written with that zone's offset then. Missing parts are their start.
 * Undefined when it is not a real instant or lies before 1900.
 */
export function dateTimeFromTs(value: string, timeZone: string = DEFAULT_TIME_ZONE): string | undefined {
  const parts = tsParts(value);
  if (!parts || Number(parts.y) < 1900) return undefined;
  const { y, mo, d, h, mi, s, frac } = parts;
  const offset = parts.offset ?? offsetOfWallTime(parts.wallMs, timeZone);
  return `${y}-${mo ?? '01'}-${d ?? '01'}T${h ?? '00'}:${mi ?? '00'}:${s ?? '00'}${frac ? `.${frac}` : ''}${isoOffset(offset)}`;
}

/** HL7 DT (or the date part of a TS) -> `YYYY-MM-DD`; undefined when it is not a real date. */
export function dateFromDt(value: string): string | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})/.exec(value.trim());
  if (!m) return undefined;
  const [, y, mo, d] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d));
  const check = new Date(ms);
  if (check.getUTCFullYear() !== Number(y) || check.getUTCMonth() !== Number(mo) - 1 || check.getUTCDate() !== Number(d) || Number(y) < 1850) return undefined;
  return `${y}-${mo}-${d}`;
}

const present = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' || value === '""' ? undefined : value);

/** Drops undefined properties (the stored JSON stays as the chart import writes it). */
export function compact<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** XPN (family^given^middle^suffix^prefix); family may be a FN with subcomponents (surname first). */
export function personName(components: string[][] | undefined): PersonName | undefined {
  if (!components) return undefined;
  const family = present(components[0]?.[0]);
  if (!family) return undefined;
  return compact({
    family,
    given: present(components[1]?.[0]),
    middle: present(components[2]?.[0]),
    suffix: present(components[3]?.[0]),
    prefix: present(components[4]?.[0]),
  });
}

/** XCN (id^family^given^middle^suffix^prefix). */
export function clinician(components: string[][] | undefined): Clinician | undefined {
  if (!components) return undefined;
  const name = personName(components.slice(1));
  if (!name) return undefined;
  return compact({ id: present(components[0]?.[0]), name });
}

/** CE/CWE (code^text^system). */
export function codedValue(components: string[][] | undefined): CodedValue | undefined {
  if (!components) return undefined;
  const code = present(components[0]?.[0]);
  const display = present(components[1]?.[0]);
  if (!code && !display) return undefined;
  return compact({ code: code ?? display!, display, system: present(components[2]?.[0]) });
}

/** XAD (street^other^city^state^zip^country). */
export function address(components: string[][] | undefined): Address | undefined {
  if (!components) return undefined;
  const value = compact({
    line1: present(components[0]?.[0]),
    line2: present(components[1]?.[0]),
    city: present(components[2]?.[0]),
    state: present(components[3]?.[0]),
    postalCode: present(components[4]?.[0]),
    country: present(components[5]?.[0]),
  });
  return Object.keys(value).length > 0 ? value : undefined;
}

/** PID-13 style XTN repetitions: the phone number (first non-e-mail) and the e-mail (XTN-3 `Internet` or XTN-2 `NET`). */
export function telecoms(segment: ParsedSegment | undefined, field: number): { phone?: string; email?: string } {
  let phone: string | undefined;
  let email: string | undefined;
  for (const rep of repetitionsOf(segment, field)) {
    const use = rep[1]?.[0] ?? '';
    const type = rep[2]?.[0] ?? '';
    if (type.toLowerCase() === 'internet' || use === 'NET') {
      email ??= present(rep[3]?.[0]);
    } else {
      phone ??= present(rep[0]?.[0]) ?? present(rep[11]?.[0]);
    }
  }
  return compact({ phone, email });
}

export { present };
