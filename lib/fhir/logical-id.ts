/**
 * FHIR logical ids for chart records.
 *
 * A FHIR id is 1-64 characters of `[A-Za-z0-9-.]`; chart ids are 1-128 characters of
 * `[A-Za-z0-9._:-]`. Every resource the service serves is read in a key that includes the patient
 * (as the HL7 exports do), so a record's logical id carries its patient:
 *
 *   Patient            <patient>
 *   Encounter          <patient>..<encounterId>
 *   DocumentReference  <patient>..<noteId>
 *   Observation        <patient>..<assessmentId>
 *   DiagnosticReport   <patient>..<resultId>
 *
 * Each part is the chart id with `.`, `_` and `:` written as `.` + two upper-case hex digits
 * (`.2E`, `.5F`, `.3A`); every other character stands for itself. `..` (a dot not followed by two
 * hex digits) separates the parts, so decoding is unambiguous. `demo-patient-1..demo-note-1` is the
 * note `demo-note-1` of `demo-patient-1`; the result `lr_3f…` of that patient is
 * `demo-patient-1..lr.5F3f…`.
 *
 * A record id read under another patient is looked up under that other patient's key and is simply
 * not found: the answer is the same 404 as for an id that never existed.
 *
 * At most 64 characters (issue 27): an id of that form that fits is the id (every id written before
 * stays the same). A longer one is written compact, part by part:
 *   - a lab result id (`lr_` + 32 hex) is `.R` + its 128 bits in 22 base-62 digits;
 *   - a UUID (lower case `.U`, upper case `.V`) likewise (`.U` + 22 digits);
 *   - a record part that still does not fit is `.H` + 22 base-62 digits of the SHA-256 of the record id
 *     (a read finds the record among the patient's records of that type: {@link recordIdsOf} gives
 *     `recordHash`), and a patient part that does not fit on its own is hashed too (`.H`; such an id
 *     names its resource but cannot be read by id: the service has no index from hashes to patients).
 * `R`, `U`, `V` and `H` are no hex digits, so none of these reads as an escape; every id stays stable
 * (the same chart ids give the same logical id) and unique (distinct ids differ in their parts, or in
 * 128 bits of SHA-256 for hashed parts).
 */

import { createHash } from 'node:crypto';

export const FHIR_ID_PATTERN = /^[A-Za-z0-9\-.]{1,64}$/;
/** R4: an id is at most 64 characters. */
export const MAX_FHIR_ID_LENGTH = 64;
/** longest logical id accepted on input (two 128-character chart ids, every character escaped) */
export const MAX_LOGICAL_ID_LENGTH = 2 * 128 * 3 + 2;

const CHART_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const ESCAPED: Record<string, string> = { '.': '.2E', _: '.5F', ':': '.3A' };
const UNESCAPED: Record<string, string> = { '2E': '.', '5F': '_', '3A': ':' };
const SEPARATOR = '..';

function encodePart(chartId: string): string {
  if (!CHART_ID.test(chartId)) throw new RangeError('not a chart id');
  return chartId.replace(/[._:]/g, (c) => ESCAPED[c]!);
}

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** 62^22 > 2^128: 22 digits hold 128 bits. */
const COMPACT_DIGITS = 22;
const RESULT_ID = /^lr_([0-9a-f]{32})$/;
const UUID_LOWER = /^([0-9a-f]{8})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{4})-([0-9a-f]{12})$/;
const UUID_UPPER = /^([0-9A-F]{8})-([0-9A-F]{4})-([0-9A-F]{4})-([0-9A-F]{4})-([0-9A-F]{12})$/;
const COMPACT_PART = /^\.([RUVH])([0-9A-Za-z]{22})$/;
/** A hashed part as {@link decodeLogicalId} gives it: `#` (never in a chart id) and the 22 digits. */
const HASH_MARK = '#';

function base62(value: bigint): string {
  let out = '';
  for (let i = 0; i < COMPACT_DIGITS; i += 1) {
    out = BASE62[Number(value % 62n)]! + out;
    value /= 62n;
  }
  return out;
}

function fromBase62(digits: string): bigint | undefined {
  let value = 0n;
  for (const digit of digits) value = value * 62n + BigInt(BASE62.indexOf(digit));
  return value < 1n << 128n ? value : undefined;
}

function hex128(value: bigint): string {
  return value.toString(16).padStart(32, '0');
}

/** `.R`/`.U`/`.V` + 22 digits for a result id or a UUID; undefined for any other id. */
function compactPart(chartId: string): string | undefined {
  const result = RESULT_ID.exec(chartId);
  if (result) return `.R${base62(BigInt(`0x${result[1]}`))}`;
  const lower = UUID_LOWER.exec(chartId);
  if (lower) return `.U${base62(BigInt(`0x${lower.slice(1).join('')}`))}`;
  const upper = UUID_UPPER.exec(chartId);
  if (upper) return `.V${base62(BigInt(`0x${upper.slice(1).join('')}`))}`;
  return undefined;
}

function hashedPart(chartId: string): string {
  return `.H${base62(BigInt(`0x${createHash('sha256').update(chartId, 'utf8').digest('hex').slice(0, 32)}`))}`;
}

/** The `.H` digits a record id hashes to (what a hashed part of {@link decodeLogicalId} holds after `#`). */
export function recordIdHash(recordId: string): string {
  return hashedPart(recordId).slice(2);
}

function shortestPart(chartId: string): string {
  const plain = encodePart(chartId);
  const compact = compactPart(chartId);
  return compact !== undefined && compact.length < plain.length ? compact : plain;
}

/** The logical id of a patient, or of one of the patient's records (at most 64 characters; see the top of this file). */
export function logicalId(patientId: string, recordId?: string): string {
  const full = recordId === undefined ? encodePart(patientId) : `${encodePart(patientId)}${SEPARATOR}${encodePart(recordId)}`;
  if (full.length <= MAX_FHIR_ID_LENGTH) return full;
  const patient = shortestPart(patientId);
  if (recordId === undefined) return patient.length <= MAX_FHIR_ID_LENGTH ? patient : hashedPart(patientId);
  const record = shortestPart(recordId);
  if (patient.length + SEPARATOR.length + record.length <= MAX_FHIR_ID_LENGTH) return `${patient}${SEPARATOR}${record}`;
  const hashedRecord = record.length <= 2 + COMPACT_DIGITS ? record : hashedPart(recordId);
  const patientPart = patient.length + SEPARATOR.length + hashedRecord.length <= MAX_FHIR_ID_LENGTH ? patient : hashedPart(patientId);
  return `${patientPart}${SEPARATOR}${hashedRecord}`;
}

function decodeCompactPart(part: string): string | undefined {
  const match = COMPACT_PART.exec(part);
  if (!match) return undefined;
  const [, kind, digits] = match;
  if (kind === 'H') return `${HASH_MARK}${digits}`;
  const value = fromBase62(digits!);
  if (value === undefined) return undefined;
  const hex = hex128(value);
  if (kind === 'R') return `lr_${hex}`;
  const uuid = `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
  return kind === 'U' ? uuid : uuid.toUpperCase();
}

/** True for a part {@link decodeLogicalId} gives for a hashed part (no chart id: `#` + digits). */
export function isHashedPart(part: string): boolean {
  return part.startsWith(HASH_MARK);
}

export type DecodedLogicalId = { ok: true; parts: string[] } | { ok: false };

/**
 * The chart ids a logical id names, in order; `{ ok: false }` when the text is not a logical id
 * this service could have written (wrong characters, a bad escape, an empty part, too long).
 */
export function decodeLogicalId(id: string): DecodedLogicalId {
  if (typeof id !== 'string' || id.length === 0 || id.length > MAX_LOGICAL_ID_LENGTH || !/^[A-Za-z0-9\-.]+$/.test(id)) return { ok: false };
  const parts: string[] = [];
  let current = '';
  for (let i = 0; i < id.length; i++) {
    const c = id[i]!;
    if (current === '' && c === '.' && /^[RUVH]$/.test(id[i + 1] ?? '')) {
      // a compact part (`.R`, `.U`, `.V`, `.H` + 22 digits): the whole part
      const decoded = decodeCompactPart(id.slice(i, i + 2 + COMPACT_DIGITS));
      const end = i + 2 + COMPACT_DIGITS;
      if (decoded === undefined || (end < id.length && id.slice(end, end + 2) !== SEPARATOR)) return { ok: false };
      parts.push(decoded);
      i = end + 1; // past the separator (the loop adds one more)
      if (end >= id.length) return { ok: true, parts };
      continue;
    }
    if (c !== '.') {
      current += c;
      continue;
    }
    if (id[i + 1] === '.') {
      parts.push(current);
      current = '';
      i += 1;
      continue;
    }
    const escaped = UNESCAPED[id.slice(i + 1, i + 3)];
    if (!escaped) return { ok: false };
    current += escaped;
    i += 2;
  }
  parts.push(current);
  if (!parts.every((p) => CHART_ID.test(p) || isHashedPart(p))) return { ok: false };
  return { ok: true, parts };
}

/** A patient's id from a Patient logical id; undefined when it names anything else. */
export function patientIdOf(id: string): string | undefined {
  const decoded = decodeLogicalId(id);
  // only the id this service writes for the patient (one id per patient: not a compact form of a short id)
  return decoded.ok && decoded.parts.length === 1 && !isHashedPart(decoded.parts[0]!) && logicalId(decoded.parts[0]!) === id ? decoded.parts[0] : undefined;
}

/**
 * Patient and record ids from a record's logical id; undefined when it is not `<patient>..<record>`
 * or its patient part is hashed. A hashed record part gives `recordHash` ({@link recordIdHash} of the
 * record id) and an empty `recordId`: the reader looks the record up among the patient's records.
 */
export function recordIdsOf(id: string): { patientId: string; recordId: string; recordHash?: string } | undefined {
  const decoded = decodeLogicalId(id);
  if (!decoded.ok || decoded.parts.length !== 2 || isHashedPart(decoded.parts[0]!)) return undefined;
  const [patientId, record] = decoded.parts as [string, string];
  if (isHashedPart(record)) return { patientId, recordId: '', recordHash: record.slice(HASH_MARK.length) };
  // only the id this service writes for the record (one id per record)
  return logicalId(patientId, record) === id ? { patientId, recordId: record } : undefined;
}

/** True when the logical id conforms to the R4 `id` type (at most 64 characters). */
export function isConformantId(id: string): boolean {
  return FHIR_ID_PATTERN.test(id);
}
