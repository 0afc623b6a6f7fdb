import { createHash } from 'node:crypto';

/*
 * Identifiers within the v2.5.1 lengths, and their namespaces.
 *
 * v2.5.1 limits CX-1 and XCN-1 to 15 characters, EI-1 in OBR-2/OBR-3/ORC-2/ORC-3 to 22 (the field is
 * 22 long) and TXA-12 (EI) to 30 in all. Chart ids can be longer (`demo-encounter-1` is 16), and a
 * receiver that enforces the lengths either rejects the message or truncates, and truncation makes
 * `encounter-10000000001` and `encounter-10000000002` the same visit.
 *
 * The short form, {@link shortIdentifier}:
 * - an id that fits and is made only of "plain" characters (printable ASCII other than space, `_` and
 *   the HL7 delimiters `| ^ ~ \ &`) is written as it is;
 * - any other id is written as `_` followed by the first (length - 1) characters of the base-32
 *   (digits and upper-case letters without I, L, O, U) SHA-256 of its UTF-8 bytes.
 * A plain id never contains `_`, so a hashed id can never equal an id written as it is, and the same
 * id always gives the same short form (stable across messages and deployments). A short form that
 * comes back (a receiver's copy of our message sent to the intake) is written as it is, so the short
 * form of a short form is itself. Two different long
 * ids share a short form only if SHA-256 collides on its first 70 bits (CX/XCN, 14 characters) or 105
 * bits (EI, 21 characters): for a million distinct long ids the chance of any collision is below
 * 4 * 10^-10 for CX/XCN and negligible for EI. No id is ever truncated.
 */

/** Field lengths of v2.5.1 that identifiers must respect. */
export const IDENTIFIER_LENGTH = {
  /** CX-1 (PID-3, PV1-19) */
  cx: 15,
  /** XCN-1 (clinicians) */
  xcn: 15,
  /** EI-1 in OBR-2, OBR-3, ORC-2, ORC-3 (each field 22 long) */
  ei: 22,
  /** TXA-12 unique document number, the whole EI */
  documentNumber: 30,
} as const;

/** Marks a hashed short form; never part of an id written as it is. */
export const SHORT_FORM_MARKER = '_';

const NOT_PLAIN = /[|^~\\&_]/;
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';

function base32(bytes: Uint8Array): string {
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
    buffer &= (1 << bits) - 1;
  }
  return bits > 0 ? out + BASE32[(buffer << (5 - bits)) & 31] : out;
}

/** The characters a plain id is made of: printable ASCII other than space, `_` and `| ^ ~ \\ &` (index = char code). */
const IS_PLAIN_CHARACTER = new Uint8Array(128);
for (let code = 0x21; code <= 0x7e; code += 1) {
  IS_PLAIN_CHARACTER[code] = NOT_PLAIN.test(String.fromCharCode(code)) ? 0 : 1;
}

/** True when `id` is written as it is within `maxLength` characters. */
export function isPlainIdentifier(id: string, maxLength: number): boolean {
  const length = id.length;
  if (length === 0 || length > maxLength) {
    return false;
  }
  // one scan, not two regular expressions: this runs for every id of every message
  for (let index = 0; index < length; index += 1) {
    if (IS_PLAIN_CHARACTER[id.charCodeAt(index)] !== 1) {
      return false;
    }
  }
  return true;
}

const SHORT_FORM = /^_[0-9A-HJKMNP-TV-Z]+$/;

/**
 * True when `id` already is a short form of `maxLength` (`_` and maxLength - 1 base-32 digits, the
 * only length a hashed id has): a receiver that filed our short form
 * and sends it back (an inbound ADT naming the clinician `_10VR8TK2K4YD8T`) gets the same id again,
 * not a hash of the hash.
 */
export function isShortForm(id: string, maxLength: number): boolean {
  return maxLength >= 2 && id.length === maxLength && SHORT_FORM.test(id);
}

/** The short form of `id` within `maxLength` characters (see the comment at the top of this file). */
export function shortIdentifier(id: string, maxLength: number): string {
  if (isPlainIdentifier(id, maxLength) || isShortForm(id, maxLength)) {
    return id;
  }
  const digest = createHash('sha256').update(id, 'utf8').digest();
  return SHORT_FORM_MARKER + base32(digest).slice(0, Math.max(1, maxLength - 1));
}

/**
 * The namespaces written beside identifiers: EI-2 of order, result and document numbers (OBR-2/3,
 * ORC-2/3, TXA-12), XCN-9 of clinician ids, CX-4 of visit numbers (PV1-19). PID-3 keeps the patient's
 * own assigning authority. Each is an HD namespace id (IS, at most 20 characters).
 */
export interface IdentifierNamespaces {
  entity: string;
  clinician: string;
  visit: string;
}
