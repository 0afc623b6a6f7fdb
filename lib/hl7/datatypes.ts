import type { Address, Clinician, CodedValue, PersonName } from '../chart/types';
import { Hl7EncodingError } from './errors';
import { type EscapedText, escapeText } from './escape';
import { IDENTIFIER_LENGTH, shortIdentifier } from './identifiers';
import type { Components, TextComponents } from './segment';

/*
 * Builders of HL7 v2.5.1 composite data types from chart values. Each returns escaped components,
 * ready for `Segment.set`. Empty trailing components are dropped when the segment is serialized.
 */

/** Table 0200 name type: legal name. */
export const NAME_TYPE_LEGAL = 'L';
/** Table 0190 address type: home. */
export const ADDRESS_TYPE_HOME = 'H';
/** Table 0203 identifier type of a clinician's id: provider number. */
export const IDENTIFIER_TYPE_PROVIDER_NUMBER = 'PRN';

/** The empty value, escaped once, at load. */
const EMPTY = escapeText('');

/** Each RAW component escaped ({@link escapeText}): the escaped form of a `...TextFrom...` builder's components. */
function escapeEach(components: TextComponents): Components {
  const escaped: EscapedText[] = new Array<EscapedText>(components.length);
  for (let index = 0; index < components.length; index += 1) {
    escaped[index] = escapeText(components[index]);
  }
  return escaped;
}

/**
 * XPN (person name) as RAW components, for `Segment.setTextComponents` (which escapes them):
 * FAMILY^GIVEN^MIDDLE^SUFFIX^PREFIX^^TYPE, XPN-7 name type `L` (legal, table 0200).
 */
export function xpnTextFromPersonName(name: PersonName): TextComponents {
  return [name.family, name.given, name.middle, name.suffix, name.prefix, '', NAME_TYPE_LEGAL];
}

/** XPN (person name), escaped: {@link xpnTextFromPersonName}. */
export function xpnFromPersonName(name: PersonName): Components {
  return escapeEach(xpnTextFromPersonName(name));
}

/**
 * XCN (person with an identifier) as RAW components, for `Segment.setTextComponents` (which escapes
 * them): ID^FAMILY^GIVEN^MIDDLE^SUFFIX^PREFIX^^^AUTHORITY^L^^^PRN.
 * XCN-1 the clinician id in its short form (at most 15 characters, see identifiers.ts), XCN-9 the
 * assigning authority (configured namespace) and XCN-13 `PRN` (provider number, table 0203) when there
 * is an id; XCN-10 name type `L`. The name part (XCN-2..6) is the one of XPN.
 */
export function xcnTextFromClinician(clinician: Clinician, assigningAuthority: string): TextComponents {
  const { name } = clinician;
  const hasId = typeof clinician.id === 'string' && clinician.id.trim() !== '';
  return [
    hasId ? shortIdentifier(clinician.id!, IDENTIFIER_LENGTH.xcn) : '',
    name.family,
    name.given,
    name.middle,
    name.suffix,
    name.prefix,
    '',
    '',
    hasId ? assigningAuthority : '',
    NAME_TYPE_LEGAL,
    '',
    '',
    hasId ? IDENTIFIER_TYPE_PROVIDER_NUMBER : '',
  ];
}

/** XCN (person with an identifier), escaped: {@link xcnTextFromClinician}. */
export function xcnFromClinician(clinician: Clinician, assigningAuthority: string): Components {
  return escapeEach(xcnTextFromClinician(clinician, assigningAuthority));
}

/**
 * XAD (address): STREET^OTHER DESIGNATION^CITY^STATE^ZIP^COUNTRY^TYPE. XAD-1 is an SAD whose first
 * subcomponent is the street line; a `&` in it is escaped like any other delimiter. XAD-7 address type
 * (table 0190), `H` (home) for a patient's address.
 */
export function xadFromAddress(address: Address, addressType: string = ADDRESS_TYPE_HOME): Components {
  return [
    [escapeText(address.line1)],
    escapeText(address.line2),
    escapeText(address.city),
    escapeText(address.state),
    escapeText(address.postalCode),
    escapeText(address.country),
    escapeText(addressType),
  ];
}

/** Telephone use codes (HL7 table 0201); NET (e-mail) is written by {@link xtnFromEmail}. */
export type TelecomUseCode = 'PRN' | 'WPN' | 'ORN' | 'EMR';

/** A North American (NANP) number: optional +1 / 1, a three-digit area code, seven digits; nothing else. */
const NANP_NUMBER = /^\s*(?:\+?1[\s.-]*)?\(?([2-9]\d{2})\)?[\s.-]*(\d{3})[\s.-]*(\d{4})\s*$/;

/**
 * XTN for a telephone number: NUMBER^USE^PH^^COUNTRY^AREA^LOCAL (XTN-1 the number as stored, XTN-2 use
 * code from table 0201, XTN-3 equipment type `PH` from table 0202). A North American number is also
 * written in its parts, as receivers read it (v2.5.1 deprecates XTN-1 in favour of them): XTN-5 country
 * code `1`, XTN-6 area code, XTN-7 the seven-digit local number. Other numbers stay in XTN-1 only.
 * `useCode` may be omitted when the use is not known.
 */
export function xtnFromPhone(phone: string, useCode?: TelecomUseCode): Components {
  const nanp = NANP_NUMBER.exec(phone);
  const base = [escapeText(phone), escapeText(useCode), escapeText('PH')];
  if (!nanp) {
    return base;
  }
  return [...base, escapeText(''), escapeText('1'), escapeText(nanp[1]), escapeText(`${nanp[2]}${nanp[3]}`)];
}

/** XTN for an e-mail address: ^NET^Internet^ADDRESS (XTN-2 `NET`, XTN-3 `Internet`, XTN-4 the address). */
export function xtnFromEmail(email: string): Components {
  return [EMPTY, escapeText('NET'), escapeText('Internet'), escapeText(email)];
}

/**
 * CX (identifier) as RAW components, for `Segment.setTextComponents`: ID^^^AUTHORITY^TYPE, e.g.
 * `12345^^^HOSP^MR`. CX-1 in its short form (at most 15 characters, see identifiers.ts).
 */
export function cxTextFromIdentifier(id: string, assigningAuthority: string | undefined, identifierTypeCode: string): TextComponents {
  return [typeof id === 'string' && id.trim() !== '' ? shortIdentifier(id, IDENTIFIER_LENGTH.cx) : id, '', '', assigningAuthority, identifierTypeCode];
}

/** CX (identifier), escaped: {@link cxTextFromIdentifier}. */
export function cxFromIdentifier(id: string, assigningAuthority: string | undefined, identifierTypeCode: string): Components {
  return escapeEach(cxTextFromIdentifier(id, assigningAuthority, identifierTypeCode));
}

/** A character other than space and control characters in ASCII (never white space). */
function isPrintableAscii(code: number): boolean {
  return code > 0x20 && code < 0x7f;
}

/**
 * Coding system names as HL7 table 0396 spells them. The chart stores ICD-10-CM codes under `I10`
 * (its documented convention, lib/chart/types.ts), which table 0396 reserves for WHO ICD-10: those are
 * written `I10C`. Every other name is written as stored.
 */
export function codingSystemName(system: string | undefined): string | undefined {
  if (typeof system !== 'string') {
    return system;
  }
  // only `I10`, `ICD-10-CM` and `ICD10CM` (any case, white space around) are renamed: other lengths with
  // printable ASCII at both ends (no white space to trim) are written as stored without building copies
  const length = system.length;
  if (length !== 3 && length !== 7 && length !== 9 && isPrintableAscii(system.charCodeAt(0)) && isPrintableAscii(system.charCodeAt(length - 1))) {
    return system;
  }
  const normalized = system.trim().toUpperCase();
  return normalized === 'I10' || normalized === 'ICD-10-CM' || normalized === 'ICD10CM' ? 'I10C' : system;
}

/**
 * CE (v2.5.1 coded element; the same first three components as CWE): CODE^TEXT^CODING SYSTEM.
 * v2.5.1 types most coded fields used here (PID-10/15/16/22, OBX-3, OBX-6, OBR-4, PV2-3) as CE; the
 * components are the same for a CWE field. CE-3 through {@link codingSystemName}.
 */
export function ceFromCodedValue(coded: CodedValue): Components {
  return [escapeText(coded.code), escapeText(coded.display), escapeText(codingSystemName(coded.system))];
}

/**
 * CE with its alternate triplet: CODE^TEXT^SYSTEM^ALT CODE^ALT TEXT^ALT SYSTEM (CE-4..6, e.g. the lab's
 * local code beside a LOINC code). Without an alternate, exactly {@link ceFromCodedValue}.
 */
export function ceWithAlternate(coded: CodedValue, alternate: CodedValue | undefined): Components {
  const primary = ceFromCodedValue(coded);
  if (!alternate || typeof alternate.code !== 'string' || (alternate.code.trim() === '' && !alternate.display)) {
    return primary;
  }
  return [...primary, escapeText(alternate.code), escapeText(alternate.display), escapeText(codingSystemName(alternate.system))];
}

/** CE carrying only text (CE-2), for a value with no code, e.g. an admit reason. */
export function ceFromText(text: string): Components {
  return [EMPTY, escapeText(text)];
}

/** Alias of {@link ceFromCodedValue} for fields typed CWE. */
export const cweFromCodedValue = ceFromCodedValue;

/**
 * EI (entity identifier): ID^NAMESPACE. EI-1 in its short form (at most `maxLength` characters, 22 by
 * default: OBR-2/3, ORC-2/3; see identifiers.ts), EI-2 the configured namespace.
 */
export function eiFromIdentifier(id: string, namespace: string, maxLength: number = IDENTIFIER_LENGTH.ei): Components {
  return escapeEach(eiTextFromIdentifier(id, namespace, maxLength));
}

/** EI as RAW components, for `Segment.setTextComponents`: {@link eiFromIdentifier} before escaping. */
export function eiTextFromIdentifier(id: string, namespace: string, maxLength: number = IDENTIFIER_LENGTH.ei): TextComponents {
  const hasId = typeof id === 'string' && id.trim() !== '';
  return [hasId ? shortIdentifier(id, maxLength) : id, hasId ? namespace : undefined];
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

/**
 * `YYYY-MM-DDTHH:MM[:SS[.fraction]]` then `Z` or an offset `±HH:MM` / `±HHMM`. The fields stand at fixed
 * places (year 0-3, month 5-6, day 8-9, hour 11-12, minute 14-15, seconds 17-18 when index 16 is `:`),
 * and the zone is read from the end, so {@link tsFromDateTime} needs no capture groups.
 */
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)$/i;

/**
 * `yyyyMMddHHmmss` from its parts (all in range), written from one number (below 2^53, so exact): one
 * flat string. Concatenating six pieces would build a rope (cons string) instead, which the scan of
 * escaping and of the segment's check would first have to flatten, and that costs more than the rest.
 */
function timestampText(year: number, month: number, day: number, hour: number, minute: number, second: number): string {
  const digits = String(((((year * 100 + month) * 100 + day) * 100 + hour) * 100 + minute) * 100 + second);
  return year >= 1000 ? digits : digits.padStart(14, '0');
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

const MS_PER_DAY = 86_400_000;

/*
 * Calendar arithmetic without `Date` objects (H. Hinnant, "chrono-Compatible Low-Level Date Algorithms":
 * days_from_civil / civil_from_days), exact for the proleptic Gregorian calendar that `Date` uses. A
 * time stamp is written in every message header and event segment, so this path is hot.
 */

/** Days from 1970-01-01 to a date (`month` 1-12). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * ((month + 9) % 12) + 2) / 5) + day - 1; // from March 1st
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * TS `yyyyMMddHHmmss+0000` of an epoch time in milliseconds (fractions of a second dropped): digits and
 * `+`, which escaping leaves as they are, so this is its own escaped text (the segment checks it too).
 */
function utcTimeStamp(time: number, inputPath: string): EscapedText {
  return (formatEpochMilliseconds(time, inputPath) + UTC_OFFSET) as EscapedText;
}

/** `yyyyMMddHHmmss` in UTC of an epoch time in milliseconds (fractions of a second dropped). */
function formatEpochMilliseconds(time: number, inputPath: string): string {
  if (Number.isNaN(time)) {
    throw new Hl7EncodingError(inputPath, 'is not a valid date-time');
  }
  const days = Math.floor(time / MS_PER_DAY);
  const secondOfDay = Math.floor((time - days * MS_PER_DAY) / 1000);
  const shifted = days + 719_468; // days from 0000-03-01
  const era = Math.floor(shifted / 146_097);
  const dayOfEra = shifted - era * 146_097;
  const yearOfEra = Math.floor((dayOfEra - Math.floor(dayOfEra / 1460) + Math.floor(dayOfEra / 36_524) - Math.floor(dayOfEra / 146_096)) / 365);
  const dayOfYear = dayOfEra - (365 * yearOfEra + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100)); // from March 1st
  const monthFromMarch = Math.floor((5 * dayOfYear + 2) / 153);
  const day = dayOfYear - Math.floor((153 * monthFromMarch + 2) / 5) + 1;
  const month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9;
  const year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0);
  if (year < 1 || year > 9999) {
    throw new Hl7EncodingError(inputPath, 'is not a valid date-time');
  }
  return timestampText(year, month, day, Math.floor(secondOfDay / 3600), Math.floor(secondOfDay / 60) % 60, secondOfDay % 60);
}

/** The offset written after every time stamp: the time is UTC. */
export const UTC_OFFSET = '+0000';

/**
 * TS (time stamp) as `yyyyMMddHHmmss+0000`: the format the service spec shows, with an explicit offset.
 *
 * Time zone choice: every time stamp is written in UTC, with the offset `+0000`. Without an offset,
 * v2.5.1 (chapter 2A, DTM) reads a time in the sender's local zone, and receivers do; the offset makes
 * the instant unambiguous. Fractions of a second are dropped (the spec's precision is one second).
 *
 * Accepts a `Date` or an ISO 8601 date-time string with `Z` or an offset (`2024-03-01T09:30:00+01:00`).
 * Throws {@link Hl7EncodingError} (naming `inputPath`) for anything else.
 */
export function tsFromDateTime(value: string | Date, inputPath = 'dateTime'): EscapedText {
  if (typeof value !== 'string') {
    // not `instanceof Date`: a Date from another realm (vm context, worker) must work too. No cache from
    // one message to the next: each message formats its own time stamps
    return utcTimeStamp(value.getTime(), inputPath);
  }
  // `test`, then the fields read at their fixed places: no match array and no substrings to allocate (the
  // common UTC form, as toISOString writes it, is recognised without the regular expression)
  if (!isCommonIsoDateTime(value) && !ISO_DATE_TIME.test(value)) {
    throw new Hl7EncodingError(inputPath, 'is not an ISO 8601 date-time with an offset or Z');
  }
  const y = digitsAt(value, 0, 4);
  const mo = digitsAt(value, 5, 2);
  const d = digitsAt(value, 8, 2);
  const h = digitsAt(value, 11, 2);
  const mi = digitsAt(value, 14, 2);
  const s = value.charCodeAt(16) === COLON ? digitsAt(value, 17, 2) : 0;
  if (y < 1 || !isCalendarDate(y, mo, d) || h > 23 || mi > 59 || s > 59) {
    throw new Hl7EncodingError(inputPath, 'is not a valid date-time');
  }
  const offsetMinutes = zoneOffsetMinutes(value);
  if (offsetMinutes === 0) {
    // already UTC: the time as written (validated above; the year has four digits, so 0001-9999); digits
    // and `+` are their own escaped text
    return (timestampText(y, mo, d, h, mi, s) + UTC_OFFSET) as EscapedText;
  }
  const utcMinuteOfDay = h * 60 + mi - offsetMinutes;
  if (utcMinuteOfDay >= 0 && utcMinuteOfDay < MINUTES_PER_DAY) {
    // the same day in UTC: only the hour and minute change
    return (timestampText(y, mo, d, Math.floor(utcMinuteOfDay / 60), utcMinuteOfDay % 60, s) + UTC_OFFSET) as EscapedText;
  }
  const utcTime = daysFromCivil(y, mo, d) * MS_PER_DAY + (utcMinuteOfDay * 60 + s) * 1000;
  return utcTimeStamp(utcTime, inputPath);
}

const MINUTES_PER_DAY = 1440;

const COLON = 0x3a;
const ZERO = 0x30;

/** Where `YYYY-MM-DDTHH:MM:SS` has its digits. */
const UTC_ISO_DIGITS: readonly number[] = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18];

function isDigitAt(text: string, index: number): boolean {
  const code = text.charCodeAt(index);
  return code >= ZERO && code <= 0x39;
}

/**
 * `YYYY-MM-DDTHH:MM:SS`, an optional `.fraction`, then `Z` or an offset `±HH:MM` (what
 * `Date.prototype.toISOString` writes, and the chart's times with their offset), read character by
 * character: a subset of what {@link ISO_DATE_TIME} accepts, without running it.
 */
export function isCommonIsoDateTime(value: string): boolean {
  const length = value.length;
  if (length < 20) return false;
  for (let position = 0; position < UTC_ISO_DIGITS.length; position += 1) {
    if (!isDigitAt(value, UTC_ISO_DIGITS[position]!)) return false;
  }
  if (
    value.charCodeAt(4) !== 0x2d /* - */ ||
    value.charCodeAt(7) !== 0x2d ||
    value.charCodeAt(10) !== 0x54 /* T */ ||
    value.charCodeAt(13) !== COLON ||
    value.charCodeAt(16) !== COLON
  ) {
    return false;
  }
  // the zone: Z, or ±HH:MM with HH 00-23 and MM 00-59
  let zoneStart = length - 1;
  if (value.charCodeAt(zoneStart) !== 0x5a /* Z */) {
    zoneStart = length - 6;
    const sign = value.charCodeAt(zoneStart);
    const hourTens = value.charCodeAt(zoneStart + 1);
    if (
      zoneStart < 19 ||
      (sign !== 0x2b /* + */ && sign !== 0x2d) ||
      !isDigitAt(value, zoneStart + 1) ||
      !isDigitAt(value, zoneStart + 2) ||
      (hourTens === 0x32 /* 2 */ ? value.charCodeAt(zoneStart + 2) > 0x33 /* 3 */ : hourTens > 0x31) /* 1 */ ||
      value.charCodeAt(zoneStart + 3) !== COLON ||
      !isDigitAt(value, zoneStart + 4) ||
      value.charCodeAt(zoneStart + 4) > 0x35 /* 5 */ ||
      !isDigitAt(value, zoneStart + 5)
    ) {
      return false;
    }
  }
  // between the seconds and the zone: nothing, or `.` and at least one digit
  if (zoneStart === 19) return true;
  if (zoneStart === 20 || value.charCodeAt(19) !== 0x2e /* . */) return false;
  for (let index = 20; index < zoneStart; index += 1) {
    if (!isDigitAt(value, index)) return false;
  }
  return true;
}

/**
 * {@link tsFromPartialDateTime} of a date-time {@link isCommonIsoDateTime} accepts (seconds, an optional
 * fraction, `Z` or `±HH:MM`: what the chart and most labs store), read at fixed places without the
 * regular expression: the same text (`2024-03-01T10:15:00.123-05:00` -> `20240301101500.123-0500`, `Z` ->
 * `+0000`, a fraction cut to the 4 digits DTM allows). Digits, `.`, `+` and `-` are their own escaped text.
 * The caller has checked {@link isCommonIsoDateTime}.
 */
export function tsFromCommonIsoDateTime(value: string, inputPath: string): EscapedText {
  const y = digitsAt(value, 0, 4);
  const mo = digitsAt(value, 5, 2);
  const d = digitsAt(value, 8, 2);
  if (y < 1 || !isCalendarDate(y, mo, d) || digitsAt(value, 11, 2) > 23 || digitsAt(value, 14, 2) > 59 || digitsAt(value, 17, 2) > 59) {
    throw new Hl7EncodingError(inputPath, 'is not a valid date or date-time');
  }
  const last = value.length - 1;
  const utc = value.charCodeAt(last) === 0x5a; /* Z */
  const zoneStart = utc ? last : value.length - 6;
  let text = value.slice(0, 4) + value.slice(5, 7) + value.slice(8, 10) + value.slice(11, 13) + value.slice(14, 16) + value.slice(17, 19);
  if (zoneStart > 19) text += '.' + value.slice(20, Math.min(zoneStart, 24));
  text += utc ? UTC_OFFSET : value.slice(zoneStart, zoneStart + 3) + value.slice(zoneStart + 4, zoneStart + 6);
  return text as EscapedText;
}

/** The number written by the `count` ASCII digits of `text` at `index` (the caller has checked they are digits). */
function digitsAt(text: string, index: number, count: number): number {
  let value = 0;
  for (let end = index + count; index < end; index += 1) {
    value = value * 10 + (text.charCodeAt(index) - ZERO);
  }
  return value;
}

/**
 * The UTC offset in minutes of a date-time that matched {@link ISO_DATE_TIME}, read from its end: `Z`,
 * or a sign and `HH:MM` or `HHMM`.
 */
function zoneOffsetMinutes(dateTime: string): number {
  const last = dateTime.length - 1;
  const code = dateTime.charCodeAt(last);
  if (code === 0x5a || code === 0x7a) {
    return 0; // Z or z
  }
  const signIndex = dateTime.charCodeAt(last - 2) === COLON ? last - 5 : last - 4;
  const minutes = digitsAt(dateTime, signIndex + 1, 2) * 60 + digitsAt(dateTime, last - 1, 2);
  return dateTime.charCodeAt(signIndex) === 0x2d ? -minutes : minutes; // 0x2d: '-'
}

/** Where `YYYY-MM-DD` has its digits. */
const ISO_DATE_DIGITS: readonly number[] = [0, 1, 2, 3, 5, 6, 8, 9];

function isIsoDate(value: string): boolean {
  if (typeof value !== 'string' || value.length !== 10 || value.charCodeAt(4) !== 0x2d /* - */ || value.charCodeAt(7) !== 0x2d) {
    return false;
  }
  for (let position = 0; position < ISO_DATE_DIGITS.length; position += 1) {
    if (!isDigitAt(value, ISO_DATE_DIGITS[position]!)) return false;
  }
  return true;
}

/**
 * DT (date) as `yyyyMMdd` from `YYYY-MM-DD` (a calendar date, no time zone involved).
 * Throws {@link Hl7EncodingError} (naming `inputPath`) for anything else.
 */
export function dtFromDate(value: string, inputPath = 'date'): EscapedText {
  // `YYYY-MM-DD` read character by character (what /^\d{4}-\d{2}-\d{2}$/ accepts), then the fields at their fixed places
  if (!isIsoDate(value)) {
    throw new Hl7EncodingError(inputPath, 'is not a YYYY-MM-DD date');
  }
  const year = digitsAt(value, 0, 4);
  if (year < 1 || !isCalendarDate(year, digitsAt(value, 5, 2), digitsAt(value, 8, 2))) {
    throw new Hl7EncodingError(inputPath, 'is not a YYYY-MM-DD date');
  }
  // digits only (checked above): their own escaped text
  return (value.slice(0, 4) + value.slice(5, 7) + value.slice(8, 10)) as EscapedText;
}

// --- Set ids ---------------------------------------------------------------------------------------------

/** `SET_IDS[n]` is set id n (SI) escaped, for the set ids most messages use; escaped once, at load. */
const SET_IDS: readonly EscapedText[] = Array.from({ length: 1024 }, (_, value) => escapeText(String(value)));

/** SI (sequence id: OBR-1, OBX-1, NTE-1, PID-1...) of a positive integer. */
export function siFromNumber(value: number): EscapedText {
  return SET_IDS[value] ?? escapeText(String(value));
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

// --- Times with their precision (issue 27) ---------------------------------------------------------------

/**
 * A PartialDateTime (lib/chart/types.ts): `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, or a date and `THH[:mm[:ss[.f]]]` with an
 * optional zone (`Z`, `±HH:MM`, `±HHMM`). Capture groups: year, month, day, hour, minute, second,
 * fraction, zone.
 */
const PARTIAL_DATE_TIME = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)?)?)?)?$/i;

/**
 * TS (DTM) of a time as the sender wrote it, keeping its precision and its zone (issue 27): `2024`
 * -> `2024`, `2024-11-07` -> `20241107` (a date stays a date), `2024-11-07T08:30-06:00` ->
 * `202411070830-0600` (minutes stay minutes, the sender's offset kept; an hour stays an hour:
 * `2024-11-07T08-06:00` -> `2024110708-0600`), seconds with up to four
 * fraction digits (DTM allows four), `Z` -> `+0000`; a time without a zone is written without one
 * (the sender's local time, as DTM reads it). Throws {@link Hl7EncodingError} for anything else.
 */
export function tsFromPartialDateTime(value: string, inputPath = 'dateTime'): EscapedText {
  if (typeof value === 'string' && isCommonIsoDateTime(value)) return tsFromCommonIsoDateTime(value, inputPath);
  const match = typeof value === 'string' ? PARTIAL_DATE_TIME.exec(value) : null;
  if (!match) {
    throw new Hl7EncodingError(inputPath, 'is not an ISO 8601 date or date-time');
  }
  const [, year, month, day, hour, minute, second, fraction, zone] = match;
  if (Number(year) < 1 || (month !== undefined && (Number(month) < 1 || Number(month) > 12))) {
    throw new Hl7EncodingError(inputPath, 'is not a valid date or date-time');
  }
  if (day !== undefined && !isCalendarDate(Number(year), Number(month), Number(day))) {
    throw new Hl7EncodingError(inputPath, 'is not a valid date or date-time');
  }
  if ((hour !== undefined && Number(hour) > 23) || (minute !== undefined && Number(minute) > 59) || (second !== undefined && Number(second) > 59)) {
    throw new Hl7EncodingError(inputPath, 'is not a valid date or date-time');
  }
  let text = `${year}${month ?? ''}${day ?? ''}${hour ?? ''}${minute ?? ''}${second ?? ''}`;
  if (fraction !== undefined) {
    text += `.${fraction.slice(0, 4)}`;
  }
  if (zone !== undefined) {
    text += zone.toUpperCase() === 'Z' ? UTC_OFFSET : zone.replace(':', '');
  }
  return escapeText(text);
}
