/**
 * FHIR R4 search parameter values the search routes understand, parsed and matched without I/O.
 *
 *   token      `code` (any system), `system|code`, `|code` (no system), `system|` (any code of the
 *              system); a comma-separated list is OR. Matched against a CodeableConcept's codings
 *              (exact, case-sensitive, as R4 says for codes).
 *   date       `[prefix]value`, prefix eq (default) ne gt lt ge le sa eb (`ap` is not supported);
 *              value `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, `YYYY-MM-DDThh:mm[:ss[.fff]][Z|±hh:mm]`. Every
 *              value stands for the range its precision covers (`2024-11` is all of November), the
 *              search value and the resource's value alike; a date or a time without an offset is
 *              read as UTC. Repeating the parameter is AND (`date=ge2024-01-01&date=lt2025-01-01`).
 *
 * Comparison of a resource range T with a search range S (R4 search, "date"):
 *   eq  T within S          ne  not eq
 *   gt  T ends after S      lt  T starts before S
 *   ge  gt or eq            le  lt or eq
 *   sa  T starts at or after the end of S        eb  T ends at or before the start of S
 */
import type { CodeableConcept } from '@medplum/fhirtypes';

export interface TokenValue {
  /** undefined: any system; '': no system */
  system?: string;
  /** undefined: any code of the system */
  code?: string;
}

/** An instant range [start, end) in milliseconds since the epoch. */
export interface DateRange {
  start: number;
  end: number;
}

export type DatePrefix = 'eq' | 'ne' | 'gt' | 'lt' | 'ge' | 'le' | 'sa' | 'eb';
export const DATE_PREFIXES: readonly DatePrefix[] = ['eq', 'ne', 'gt', 'lt', 'ge', 'le', 'sa', 'eb'];

export interface DateCondition {
  prefix: DatePrefix;
  range: DateRange;
}

export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

const MAX_TOKENS = 20;
const MAX_PART = 256;

/** A token parameter's value (a comma-separated OR list); `,` and `|` escaped with `\` are literal. */
export function parseTokenList(raw: string): Parsed<TokenValue[]> {
  const items = splitUnescaped(raw, ',');
  if (items.length === 0 || items.length > MAX_TOKENS) return { ok: false, message: `must be 1 to ${MAX_TOKENS} comma-separated tokens (system|code)` };
  const tokens: TokenValue[] = [];
  for (const item of items) {
    const parts = splitUnescaped(item, '|', true);
    if (parts.length > 2 || parts.some((p) => p.length > MAX_PART)) return { ok: false, message: 'must be a token: code, system|code, |code or system|' };
    const [first, second] = parts.map(unescape) as [string, string | undefined];
    if (second === undefined) {
      if (first === '') return { ok: false, message: 'must not be empty' };
      tokens.push({ code: first });
    } else if (first === '' && second === '') {
      return { ok: false, message: 'must name a system or a code' };
    } else {
      tokens.push({ system: first, ...(second === '' ? {} : { code: second }) });
    }
  }
  return { ok: true, value: tokens };
}

function splitUnescaped(text: string, separator: string, keepEmpty = false): string[] {
  const out: string[] = [];
  let current = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[i + 1];
      i += 1;
    } else if (c === separator) {
      out.push(current);
      current = '';
    } else current += c;
  }
  out.push(current);
  return keepEmpty ? out : out.filter((p) => p !== '');
}

function unescape(text: string): string {
  return text.replace(/\\([\\,|$])/g, '$1');
}

/** True when one of the concepts has a coding one of the tokens names. */
export function matchesToken(concepts: ReadonlyArray<CodeableConcept | undefined>, tokens: readonly TokenValue[]): boolean {
  const codings = concepts.flatMap((c) => c?.coding ?? []);
  return tokens.some((t) =>
    codings.some(
      (c) => (t.code === undefined || c.code === t.code) && (t.system === undefined || (t.system === '' ? c.system === undefined : c.system === t.system)),
    ),
  );
}

const DATE_VALUE = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})?)?)?)?$/;

/**
 * The range a FHIR date, dateTime or instant covers, by its precision; undefined when the text is
 * none of those (or names no real day or time).
 */
export function dateRange(value: string): DateRange | undefined {
  const m = DATE_VALUE.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y);
  const month = mo === undefined ? undefined : Number(mo);
  const day = d === undefined ? undefined : Number(d);
  if (month !== undefined && (month < 1 || month > 12)) return undefined;
  if (day !== undefined && (day < 1 || day > new Date(Date.UTC(year, month!, 0)).getUTCDate())) return undefined;
  if (h !== undefined && (Number(h) > 23 || Number(mi) > 59 || (s !== undefined && Number(s) > 59))) return undefined;
  const utc = (yy: number, mm = 0, dd = 1, hh = 0, mn = 0, ss = 0, ms = 0) => {
    const date = new Date(0);
    date.setUTCFullYear(yy, mm, dd);
    date.setUTCHours(hh, mn, ss, ms);
    return date.getTime();
  };
  if (month === undefined) return { start: utc(year), end: utc(year + 1) };
  if (day === undefined) return { start: utc(year, month - 1), end: utc(year, month) };
  if (h === undefined) return { start: utc(year, month - 1, day), end: utc(year, month - 1, day + 1) };
  let offsetMinutes = 0;
  if (zone && zone !== 'Z') {
    const sign = zone.startsWith('-') ? -1 : 1;
    offsetMinutes = sign * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(4, 6)));
    if (Math.abs(offsetMinutes) > 14 * 60) return undefined;
  }
  const base = utc(year, month - 1, day, Number(h), Number(mi)) - offsetMinutes * 60_000;
  if (s === undefined) return { start: base, end: base + 60_000 };
  const seconds = base + Number(s) * 1000;
  if (frac === undefined) return { start: seconds, end: seconds + 1000 };
  const digits = frac.length - 1;
  const unit = 1000 / 10 ** digits;
  const start = seconds + Math.floor(Number(frac) * 1000);
  return { start, end: start + Math.max(unit, 1) };
}

/** One `date` parameter value: an optional prefix and a date; `ap` and anything else are refused. */
export function parseDateCondition(raw: string): Parsed<DateCondition> {
  const prefixed = /^([a-z]{2})(.*)$/.exec(raw);
  const prefix = (prefixed ? prefixed[1] : 'eq') as DatePrefix;
  const value = prefixed ? prefixed[2]! : raw;
  if (!DATE_PREFIXES.includes(prefix)) return { ok: false, message: `prefix must be one of ${DATE_PREFIXES.join(', ')}` };
  const range = dateRange(value);
  if (!range) return { ok: false, message: 'must be [prefix]YYYY, YYYY-MM, YYYY-MM-DD or YYYY-MM-DDThh:mm[:ss][Z|±hh:mm]' };
  return { ok: true, value: { prefix, range } };
}

/** Whether a resource's date (as its range) satisfies one condition. */
export function matchesDateCondition(target: DateRange, condition: DateCondition): boolean {
  const s = condition.range;
  const within = target.start >= s.start && target.end <= s.end;
  switch (condition.prefix) {
    case 'eq':
      return within;
    case 'ne':
      return !within;
    case 'gt':
      return target.end > s.end;
    case 'lt':
      return target.start < s.start;
    case 'ge':
      return target.end > s.end || within;
    case 'le':
      return target.start < s.start || within;
    case 'sa':
      return target.start >= s.end;
    case 'eb':
      return target.end <= s.start;
  }
}

/** Every condition holds for the resource's date (a resource without a date matches no condition). */
export function matchesDate(value: string | undefined, conditions: readonly DateCondition[]): boolean {
  if (conditions.length === 0) return true;
  const target = value === undefined ? undefined : dateRange(value);
  return target !== undefined && conditions.every((c) => matchesDateCondition(target, c));
}
