import type { Address, Clinician, CodedValue, PersonName } from '../chart/types';
import { Hl7EncodingError } from './errors';
import { type EscapedText, escapeText } from './escape';
import type { Components } from './segment';

/*
 * Builders of HL7 v2.5.1 composite data types from chart values. Each returns escaped components,
 * ready for `Segment.set`. Empty trailing components are dropped when the segment is serialized.
 */

/** XPN (person name): FAMILY^GIVEN^MIDDLE^SUFFIX^PREFIX. */
export function xpnFromPersonName(name: PersonName): Components {
  return [
    escapeText(name.family),
    escapeText(name.given),
    escapeText(name.middle),
    escapeText(name.suffix),
    escapeText(name.prefix),
  ];
}

/**
 * XCN (person with an identifier): ID^FAMILY^GIVEN^MIDDLE^SUFFIX^PREFIX.
 */
export function xcnFromClinician(clinician: Clinician): Components {
  const { name } = clinician;
  return [
    escapeText(clinician.id),
    escapeText(name.family),
    escapeText(name.given),
    escapeText(name.middle),
    escapeText(name.suffix),
    escapeText(name.prefix),
  ];
}

/**
 * XAD (address): STREET^OTHER DESIGNATION^CITY^STATE^ZIP^COUNTRY. XAD-1 is an SAD whose first
 * subcomponent is the street line; a `&` in it is escaped like any other delimiter.
 */
export function xadFromAddress(address: Address): Components {
  return [
    [escapeText(address.line1)],
    escapeText(address.line2),
    escapeText(address.city),
    escapeText(address.state),
    escapeText(address.postalCode),
    escapeText(address.country),
  ];
}

/** Telephone use codes (HL7 table 0201); NET (e-mail) is written by {@link xtnFromEmail}. */
export type TelecomUseCode = 'PRN' | 'WPN' | 'ORN' | 'EMR';

/**
 * XTN for a telephone number: NUMBER^USE^PH (XTN-1 telephone number, XTN-2 use code from table 0201,
 * XTN-3 equipment type `PH` from table 0202). `useCode` may be omitted when the use is not known.
 */
export function xtnFromPhone(phone: string, useCode?: TelecomUseCode): Components {
  return [escapeText(phone), escapeText(useCode), escapeText('PH')];
}

/** XTN for an e-mail address: ^NET^Internet^ADDRESS (XTN-2 `NET`, XTN-3 `Internet`, XTN-4 the address). */
export function xtnFromEmail(email: string): Components {
  return [escapeText(''), escapeText('NET'), escapeText('Internet'), escapeText(email)];
}

/** CX (identifier): ID^^^AUTHORITY^TYPE, e.g. `12345^^^HOSP^MR`. */
export function cxFromIdentifier(id: string, assigningAuthority: string | undefined, identifierTypeCode: string): Components {
  return [escapeText(id), escapeText(''), escapeText(''), escapeText(assigningAuthority), escapeText(identifierTypeCode)];
}

/**
 * CE (v2.5.1 coded element; the same first three components as CWE): CODE^TEXT^CODING SYSTEM.
 * v2.5.1 types most coded fields used here (PID-10/15/16/22, OBX-3, OBX-6, OBR-4, PV2-3) as CE; the
 * components are the same for a CWE field.
 */
export function ceFromCodedValue(coded: CodedValue): Components {
  return [escapeText(coded.code), escapeText(coded.display), escapeText(coded.system)];
}

/** CE carrying only text (CE-2), for a value with no code, e.g. an admit reason. */
export function ceFromText(text: string): Components {
  return [escapeText(''), escapeText(text)];
}

/** Alias of {@link ceFromCodedValue} for fields typed CWE. */
export const cweFromCodedValue = ceFromCodedValue;

/** EI (entity identifier): the identifier alone. */
export function eiFromIdentifier(id: string): Components {
  return [escapeText(id)];
}

/** PL (person location): the location as the point of care (PL-1). */
export function plFromLocation(location: string): Components {
  return [escapeText(location)];
}

/** HD (hierarchic designator): the namespace id alone. */
export function hdFromNamespace(namespaceId: string): Components {
  return [escapeText(namespaceId)];
}

// --- Dates and times -------------------------------------------------------------------------------------

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)$/i;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** '00'..'99': two-digit fields of a time stamp without String() and padStart per field. */
const TWO_DIGITS: readonly string[] = Array.from({ length: 100 }, (_, value) => String(value).padStart(2, '0'));

function twoDigits(value: number): string {
  return TWO_DIGITS[value] ?? String(value).padStart(2, '0');
}

/** Proleptic Gregorian month length, the calendar `Date` uses; `month` 1-12. */
function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  }
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

function isCalendarDate(year: number, month: number, day: number): boolean {
  if (month < 1 || month > 12 || day < 1) {
    return false;
  }
  return day <= daysInMonth(year, month);
}

function formatUtc(date: Date, inputPath: string): string {
  const year = date.getUTCFullYear();
  if (Number.isNaN(date.getTime()) || year < 1 || year > 9999) {
    throw new Hl7EncodingError(inputPath, 'is not a valid date-time');
  }
  return (
    String(year).padStart(4, '0') +
    twoDigits(date.getUTCMonth() + 1) +
    twoDigits(date.getUTCDate()) +
    twoDigits(date.getUTCHours()) +
    twoDigits(date.getUTCMinutes()) +
    twoDigits(date.getUTCSeconds())
  );
}

/*
 * The last ISO date-time converted and its TS. A message often writes the same instant several times in a
 * row (a note's creation time in OBR-7 and OBX-14, an assessment's time in OBR-7 and every item's
 * OBX-14), so one remembered conversion saves most of them. Only successful conversions are remembered
 * (the result depends on the text alone), so errors still name their own `inputPath`.
 */
let lastDateTimeText: string | undefined;
let lastTimestamp = '' as EscapedText;

/**
 * TS (time stamp) as `yyyyMMddHHmmss`, the format the service spec shows.
 *
 * Time zone choice: every time stamp is written in UTC, without an offset suffix. The chart stores
 * instants (ISO 8601 with an offset or `Z`) and the spec's format has no room for an offset, so UTC is the
 * only choice that does not depend on the server's zone; partners are told that our times are UTC.
 * Fractions of a second are dropped (the spec's precision is one second).
 *
 * Accepts a `Date` or an ISO 8601 date-time string with `Z` or an offset (`2024-03-01T09:30:00+01:00`).
 * Throws {@link Hl7EncodingError} (naming `inputPath`) for anything else.
 */
export function tsFromDateTime(value: string | Date, inputPath = 'dateTime'): EscapedText {
  if (typeof value !== 'string') {
    // not `instanceof Date`: a Date from another realm (vm context, worker) must work too
    return escapeText(formatUtc(value, inputPath));
  }
  if (value !== lastDateTimeText) {
    lastTimestamp = timestampFromIsoText(value, inputPath);
    lastDateTimeText = value;
  }
  return lastTimestamp;
}

function timestampFromIsoText(value: string, inputPath: string): EscapedText {
  const match = ISO_DATE_TIME.exec(value);
  if (!match) {
    throw new Hl7EncodingError(inputPath, 'is not an ISO 8601 date-time with an offset or Z');
  }
  const [, year, month, day, hour, minute, second = '00', zone = 'Z'] = match;
  const y = Number(year);
  const mo = Number(month);
  const d = Number(day);
  const h = Number(hour);
  const mi = Number(minute);
  const s = Number(second);
  if (y < 1 || !isCalendarDate(y, mo, d) || h > 23 || mi > 59 || s > 59) {
    throw new Hl7EncodingError(inputPath, 'is not a valid date-time');
  }
  const offsetMinutes = zoneOffsetMinutes(zone);
  if (offsetMinutes === 0) {
    // already UTC: the digits as written (validated above; the year has four digits, so 0001-9999),
    // without a round trip through Date
    return escapeText(year + month + day + hour + minute + second);
  }
  const utc = new Date(0);
  utc.setUTCFullYear(y, mo - 1, d);
  utc.setUTCHours(h, mi - offsetMinutes, s, 0);
  return escapeText(formatUtc(utc, inputPath));
}

function zoneOffsetMinutes(zone: string): number {
  if (zone === 'Z' || zone === 'z') {
    return 0;
  }
  const digits = zone.slice(1).replace(':', '');
  const minutes = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4));
  return zone.startsWith('-') ? -minutes : minutes;
}

/**
 * DT (date) as `yyyyMMdd` from `YYYY-MM-DD` (a calendar date, no time zone involved).
 * Throws {@link Hl7EncodingError} (naming `inputPath`) for anything else.
 */
export function dtFromDate(value: string, inputPath = 'date'): EscapedText {
  const match = ISO_DATE.exec(value);
  if (!match || !isCalendarDate(Number(match[1]), Number(match[2]), Number(match[3])) || Number(match[1]) < 1) {
    throw new Hl7EncodingError(inputPath, 'is not a YYYY-MM-DD date');
  }
  return escapeText(`${match[1]}${match[2]}${match[3]}`);
}

// --- Numbers -----------------------------------------------------------------------------------------------

const NM_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

/** True when `text` is a valid NM (numeric) value as written: optional sign, digits, optional decimal point. */
export function isNumericText(text: string): boolean {
  return NM_TEXT.test(text);
}

/**
 * NM from a number, or `undefined` when the number has no NM form (NaN, infinities, and magnitudes that
 * JavaScript prints in exponent notation, which NM does not allow).
 */
export function nmFromNumber(value: number): EscapedText | undefined {
  if (!Number.isFinite(value)) {
    return undefined;
  }
  const text = String(value);
  return isNumericText(text) ? escapeText(text) : undefined;
}
