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
 */

export const FHIR_ID_PATTERN = /^[A-Za-z0-9\-.]{1,64}$/;
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

/** The logical id of a patient, or of one of the patient's records. */
export function logicalId(patientId: string, recordId?: string): string {
  return recordId === undefined ? encodePart(patientId) : `${encodePart(patientId)}${SEPARATOR}${encodePart(recordId)}`;
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
  if (!parts.every((p) => CHART_ID.test(p))) return { ok: false };
  return { ok: true, parts };
}

/** A patient's id from a Patient logical id; undefined when it names anything else. */
export function patientIdOf(id: string): string | undefined {
  const decoded = decodeLogicalId(id);
  return decoded.ok && decoded.parts.length === 1 ? decoded.parts[0] : undefined;
}

/** Patient and record ids from a record's logical id; undefined when it is not `<patient>..<record>`. */
export function recordIdsOf(id: string): { patientId: string; recordId: string } | undefined {
  const decoded = decodeLogicalId(id);
  return decoded.ok && decoded.parts.length === 2 ? { patientId: decoded.parts[0]!, recordId: decoded.parts[1]! } : undefined;
}

/** True when the logical id conforms to the R4 `id` type (at most 64 characters). */
export function isConformantId(id: string): boolean {
  return FHIR_ID_PATTERN.test(id);
}
