/**
 * Chart text as FHIR primitive values. R4 JSON forbids characters below U+0020 other than TAB, CR
 * and LF, empty strings and whitespace-only strings; `code` values also have no leading, trailing
 * or repeated whitespace. Everything else (delimiters, quotes, non-ASCII letters, emoji, combining
 * marks, U+2028...) is kept exactly. An unpaired UTF-16 surrogate cannot be written as UTF-8 and
 * becomes U+FFFD, as it would in any UTF-8 encoder.
 */

const FORBIDDEN_CONTROLS = /[\u0000-\u0008\u000B\u000C\u000E-\u001F]/g;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/** The text as a FHIR `string`, or undefined when nothing printable is left (the element is omitted). */
export function fhirString(text: string | undefined | null): string | undefined {
  if (typeof text !== 'string') return undefined;
  const cleaned = text.replace(FORBIDDEN_CONTROLS, '').replace(LONE_SURROGATE, '\uFFFD');
  return /\S/.test(cleaned) ? cleaned : undefined;
}

/** The text as a FHIR `code`: as `fhirString`, then whitespace runs become one space, trimmed. */
export function fhirCode(text: string | undefined | null): string | undefined {
  const s = fhirString(text);
  if (s === undefined) return undefined;
  const code = s.replace(/\s+/g, ' ').trim();
  return code === '' ? undefined : code;
}

/** `{ [key]: value }` when the value is present, else `{}` (for object spreads). */
export function present<K extends string, V>(key: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [P in K]?: V };
}

/** `{ [key]: list }` when the list is not empty, else `{}` (FHIR JSON has no empty arrays). */
export function nonEmpty<K extends string, V>(key: K, list: V[]): { [P in K]?: V[] } {
  return (list.length === 0 ? {} : { [key]: list }) as { [P in K]?: V[] };
}
