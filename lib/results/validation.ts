/**
 * Validation of a lab result submission: the build-time compiled JSON Schema
 * (schemas/lab-result.schema.json -> generated/lab-result.validator.js) plus the rules a schema
 * cannot express well, in one pass, so a 400 lists every failing field by JSON pointer.
 *
 * Semantic rules (run on whatever shape the body has):
 *   - data.status in the vocabulary of status.ts, case-insensitive
 *   - data.ResultedDateUTC a real instant (no 23:59:60, no Feb 30), year 1900 or later, at most
 *     5 minutes in the future (clock skew between the lab and us; a sender's clock never decides
 *     which version is current, see status.ts, but a future result time is wrong data)
 *   - data.reports[i].data canonical base64 when data.reports[i].source is "base64" (any case)
 *   - data.order.collectedEndAt (OBR-8) a real partial time in the same window, given with
 *     data.order.collectedAt and not before it (collectionEndProblem)
 *   - data.order.reportedAt (OBR-22 / FHIR issued as sent) a real partial time in the same window; with a
 *     time of day, the instant ResultedDateUTC names (to the millisecond); a date, month or year must
 *     contain that instant: the two never disagree
 *   - results[i].testNameFrom `code` only with testName equal to code (the lab sent no name: testName
 *     repeats the code); `text` only with a code (schema: dependencies); codeDisplay only with `text`
 *   - the record rules every intake path shares (lib/chart/record-rules.ts checkLabResultValues):
 *     printable test names, no control characters, lengths, the same time window, and for the
 *     optional fields (data.order, per result: codes, typed values, comments) the same text rules
 *     and real partial times (PartialDateTime) in 1900..now + 5 minutes
 *
 * Messages name the rule, never the submitted value (it may be PHI).
 */
import type { ErrorObject } from 'ajv';
import { decodeBase64Strict } from '../crypto/envelope-format';
import { ValidationFailedError, type FieldError } from '../domain-errors';
import { checkLabResultValues, partialDateTimeProblem, pointerOfPath, RECORD_RULE_MESSAGES } from '../chart/record-rules';
import { fieldErrors } from '../schemas/field-errors';
import validateSchema from './generated/lab-result.validator';
import { ACCEPTED_STATUS_VALUES, normalizeStatus } from './status';
import type { AcceptedSubmission, LabResultSubmission, LabTestResult } from './types';

/** How far in the future ResultedDateUTC may lie (clock skew between lab and us). */
export const MAX_FUTURE_SKEW_MS = 5 * 60 * 1000;
export const MIN_RESULTED_YEAR = 1900;

const INSTANT = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?Z$/;

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * A ResultedDateUTC as a fixed-width key `YYYY-MM-DDTHH:mm:ss.nnnnnnnnnZ` (string order = time
 * order) and its epoch milliseconds; undefined when it is not a real UTC instant.
 */
export function resultedAtKey(value: string): { key: string; epochMs: number } | undefined {
  const m = INSTANT.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi, s, frac = ''] = m;
  const epochMs = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s));
  const check = new Date(epochMs);
  // Date.UTC rolls over (Feb 30 -> Mar 2, 24:00 -> next day, :60 -> next minute): a real instant round-trips
  if (
    Number.isNaN(epochMs) ||
    check.getUTCFullYear() !== Number(y) ||
    check.getUTCMonth() !== Number(mo) - 1 ||
    check.getUTCDate() !== Number(d) ||
    check.getUTCHours() !== Number(h) ||
    check.getUTCMinutes() !== Number(mi) ||
    check.getUTCSeconds() !== Number(s)
  ) {
    return undefined;
  }
  return { key: `${y}-${mo}-${d}T${h}:${mi}:${s}.${frac.padEnd(9, '0')}Z`, epochMs: epochMs + Number((frac + '000').slice(0, 3)) };
}

const ID_MESSAGE = 'must be 1-128 printable ASCII characters without leading or trailing spaces';
const INSTANT_MESSAGE = 'must be an ISO 8601 UTC date-time ending in Z, e.g. 2024-03-01T09:30:00Z';

/** Readable messages for pattern / format rules (ajv's would quote the regular expression). */
const DEFINITION_MESSAGES: Record<string, string> = {
  partialDateTime:
    'must be a date or date-time with its precision: YYYY, YYYY-MM, YYYY-MM-DD, or YYYY-MM-DDTHH:mm[:ss[.f]] with an offset (Z or +HH:MM), e.g. 2024-03-01T09:30-05:00',
  decimal: 'must be a decimal number as written, e.g. 6.10, -2, .5',
};
const PROPERTY_MESSAGES: Record<string, string> = {
  valueType: 'must be an HL7 table 0125 value type (2-3 upper-case letters or digits), e.g. NM, SN, CWE, TX',
  unitsCode: 'must be a UCUM code: printable ASCII without spaces',
  system: 'must be a coding system name (table 0396): letters, digits, . _ + -',
};

function clarify(e: ErrorObject): ErrorObject {
  if (e.keyword !== 'pattern' && e.keyword !== 'format') return e;
  if (e.schemaPath.startsWith('#/definitions/id/')) return { ...e, message: ID_MESSAGE };
  const definition = /^#\/definitions\/(\w+)\//.exec(e.schemaPath)?.[1];
  if (definition && DEFINITION_MESSAGES[definition]) return { ...e, message: DEFINITION_MESSAGES[definition] };
  const property = /\/properties\/(\w+)\/pattern$/.exec(e.schemaPath)?.[1];
  if (property && PROPERTY_MESSAGES[property]) return { ...e, message: PROPERTY_MESSAGES[property] };
  if (e.instancePath === '/data/ResultedDateUTC') return { ...e, message: INSTANT_MESSAGE };
  return e;
}

function schemaErrors(body: unknown): FieldError[] {
  if (validateSchema(body)) return [];
  // the failing `then`/`else` branch reports at its own pointer; the `if` wrapper adds nothing
  const errors = (validateSchema.errors ?? []).filter((e: ErrorObject) => e.keyword !== 'if').map(clarify);
  return fieldErrors(errors);
}

function semanticErrors(body: unknown, now: Date): FieldError[] {
  const errors: FieldError[] = [];
  if (!isObject(body) || !isObject(body.data)) return errors;
  const data = body.data;
  if (typeof data.status === 'string' && data.status.length <= 32 && !normalizeStatus(data.status)) {
    errors.push({ pointer: '/data/status', message: `must be one of: ${ACCEPTED_STATUS_VALUES.join(', ')} (case-insensitive)` });
  }
  if (typeof data.ResultedDateUTC === 'string' && INSTANT.test(data.ResultedDateUTC)) {
    const at = resultedAtKey(data.ResultedDateUTC);
    if (!at) errors.push({ pointer: '/data/ResultedDateUTC', message: INSTANT_MESSAGE });
    else if (Number(at.key.slice(0, 4)) < MIN_RESULTED_YEAR)
      errors.push({ pointer: '/data/ResultedDateUTC', message: `must be in ${MIN_RESULTED_YEAR} or later` });
    else if (at.epochMs > now.getTime() + MAX_FUTURE_SKEW_MS)
      errors.push({ pointer: '/data/ResultedDateUTC', message: 'must not be more than 5 minutes in the future' });
  }
  if (Array.isArray(data.reports)) {
    data.reports.forEach((report, i) => {
      if (!isObject(report) || typeof report.source !== 'string' || typeof report.data !== 'string') return;
      if (report.source.toLowerCase() !== 'base64' || report.data.length === 0) return;
      if (!decodeBase64Strict(report.data)) {
        errors.push({
          pointer: `/data/reports/${i}/data`,
          message: 'must be valid base64 (standard alphabet, padded, without line breaks) when source is base64',
        });
      }
    });
  }
  reportedAtErrors(data, now, errors);
  // the patient's birth date (compared with the chart before filing), as form intake checks a packet's
  const birthDate = isObject(data.patient) ? data.patient.birthDate : undefined;
  if (typeof birthDate === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(birthDate) && birthDate > now.toISOString().slice(0, 10))
    errors.push({ pointer: '/data/patient/birthDate', message: 'must not be in the future' });
  const results = Array.isArray(data.results) ? data.results : [data.results];
  results.forEach((result, i) => {
    if (!isObject(result)) return;
    const at = Array.isArray(data.results) ? `/data/results/${i}` : '/data/results';
    if (result.testNameFrom === 'code' && typeof result.code === 'string' && result.testName !== result.code)
      errors.push({ pointer: `${at}/testNameFrom`, message: "'code' says the lab sent no name for the test: testName must then repeat code" });
    if (typeof result.codeDisplay === 'string' && result.testNameFrom === 'code')
      errors.push({ pointer: `${at}/codeDisplay`, message: "is the code's display beside a name of its own: only with testNameFrom 'text'" });
    for (const field of SENT_AS_IS_FIELDS) oneLineTextErrors(result[field], `${at}/${field}`, errors);
    if (typeof result.analyzedAt === 'string') {
      const problem = partialDateTimeProblem(result.analyzedAt, now);
      if (problem) errors.push({ pointer: `${at}/analyzedAt`, message: problem });
    }
    // the end of the test's period (FHIR effectivePeriod.end): a real partial time, with its start (observedAt) and not before it
    if (typeof result.observedEndAt === 'string') {
      const problem = partialDateTimeProblem(result.observedEndAt, now) ?? collectionEndProblem(result.observedAt, result.observedEndAt, 'observedAt');
      if (problem) errors.push({ pointer: `${at}/observedEndAt`, message: problem });
    }
  });
  for (const problem of checkLabResultValues(data, now)) errors.push({ pointer: `/data${pointerOfPath(problem.path)}`, message: problem.message });
  return errors;
}

/** The structured fields of a test kept as sent (OBX-23/24/25 parts, FHIR referenceRange type/appliesTo/age): one-line texts. */
const SENT_AS_IS_FIELDS = [
  'performingOrganizationIdentifier',
  'performingOrganizationAddress',
  'performingOrganizationDirector',
  'referenceRangeType',
  'referenceRangeAppliesTo',
  'referenceRangeAge',
] as const;
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F-\u009F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Every text inside `value` (objects and arrays walked) is one line of valid Unicode; a failing one is an error at its own pointer. */
function oneLineTextErrors(value: unknown, pointer: string, errors: FieldError[]): void {
  if (typeof value === 'string') {
    if (LONE_SURROGATE.test(value)) errors.push({ pointer, message: RECORD_RULE_MESSAGES.surrogate });
    else if (CONTROL_CHARACTER.test(value)) errors.push({ pointer, message: RECORD_RULE_MESSAGES.controlOneLine });
  } else if (Array.isArray(value)) value.forEach((item, i) => oneLineTextErrors(item, `${pointer}/${i}`, errors));
  else if (isObject(value)) for (const [key, item] of Object.entries(value)) oneLineTextErrors(item, `${pointer}/${key}`, errors);
}

/** A PartialDateTime with a time of day (`...THH[:mm[:ss[.f]]]` and an offset) as epoch milliseconds (fraction cut to ms). */
function instantOfPartial(value: string): number | undefined {
  const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?)?(Z|([+-])(\d{2}):(\d{2}))$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d, h, mi = '00', s = '00', frac = '', zone, sign, oh, om] = m;
  const offset = zone === 'Z' ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  return Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(s)) + Number((frac + '000').slice(0, 3)) - offset * 60_000;
}

/**
 * The instants a PartialDateTime may stand for: a time of day is one instant; a date, month or year
 * its whole span, widened by 14 hours each side (it carries no zone).
 */
function partialSpan(value: string): { earliest: number; latest: number } | undefined {
  const instant = instantOfPartial(value);
  if (instant !== undefined) return { earliest: instant, latest: instant };
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2}))?)?$/.exec(value);
  if (!m) return undefined;
  const [, y, mo, d] = m;
  const start = Date.UTC(Number(y), mo ? Number(mo) - 1 : 0, d ? Number(d) : 1);
  const end = d ? Date.UTC(Number(y), Number(mo) - 1, Number(d) + 1) : mo ? Date.UTC(Number(y), Number(mo), 1) : Date.UTC(Number(y) + 1, 0, 1);
  const zones = 14 * 3_600_000;
  return { earliest: start - zones, latest: end + zones };
}

/** The date part of a PartialDateTime as written (`YYYY`, `YYYY-MM` or `YYYY-MM-DD`). */
function writtenDate(value: string): string {
  const t = value.indexOf('T');
  return t < 0 ? value : value.slice(0, t);
}

/**
 * A period's end against its start: a collection end (OBR-8, Period.end) against order.collectedAt (OBR-7,
 * Period.start), or a test's observedEndAt (its FHIR effectivePeriod.end) against its observedAt (`startName`):
 * an end needs its start; two times of day compare as instants, otherwise the two compare at the
 * coarser precision as written (no zone widening), so no export ever ends a period before it starts.
 */
export function collectionEndProblem(collectedAt: unknown, collectedEndAt: string, startName = 'order.collectedAt'): string | undefined {
  if (typeof collectedAt !== 'string') return `requires ${startName} (the start of the period)`;
  const endBeforeStart = `must not be before ${startName}`;
  const start = instantOfPartial(collectedAt);
  const end = instantOfPartial(collectedEndAt);
  if (start !== undefined && end !== undefined) return end < start ? endBeforeStart : undefined;
  const digits = Math.min(writtenDate(collectedAt).length, writtenDate(collectedEndAt).length);
  return collectedEndAt.slice(0, digits) < collectedAt.slice(0, digits) ? endBeforeStart : undefined;
}

/**
 * A collection end an intake mapping keeps: a real partial time, not after now, not before its start;
 * else none (the result is filed without it: before OBR-8 was kept, a bad one never refused a message).
 */
export function acceptableCollectionEnd(collectedAt: string | undefined, collectedEndAt: string | undefined, now: Date): string | undefined {
  if (collectedEndAt === undefined) return undefined;
  return partialDateTimeProblem(collectedEndAt, now) || collectionEndProblem(collectedAt, collectedEndAt) ? undefined : collectedEndAt;
}

/**
 * data.order.reportedAt: a real partial time naming ResultedDateUTC (with a time of day the same
 * instant; a date, month or year must contain it). data.order.collectedEndAt: a real partial time,
 * with its start and not before it.
 */
function reportedAtErrors(data: Record<string, unknown>, now: Date, errors: FieldError[]): void {
  const order = data.order;
  if (!isObject(order)) return;
  if (typeof order.collectedEndAt === 'string') {
    const problem = partialDateTimeProblem(order.collectedEndAt, now) ?? collectionEndProblem(order.collectedAt, order.collectedEndAt);
    if (problem) errors.push({ pointer: '/data/order/collectedEndAt', message: problem });
  }
  if (typeof order.reportedAt !== 'string') return;
  const pointer = '/data/order/reportedAt';
  const problem = partialDateTimeProblem(order.reportedAt, now);
  if (problem) {
    errors.push({ pointer, message: problem });
    return;
  }
  const resulted = typeof data.ResultedDateUTC === 'string' ? resultedAtKey(data.ResultedDateUTC) : undefined;
  if (resulted === undefined) return;
  const reported = instantOfPartial(order.reportedAt);
  const span = partialSpan(order.reportedAt);
  const names =
    reported !== undefined ? reported === resulted.epochMs : span !== undefined && span.earliest <= resulted.epochMs && resulted.epochMs <= span.latest;
  if (!names)
    errors.push({ pointer, message: 'must name the same instant as ResultedDateUTC (it is that time as the lab wrote it, offset and precision kept)' });
}

function pointerOf(e: FieldError): string {
  return 'pointer' in e ? e.pointer : 'parameter' in e ? e.parameter : e.header;
}

/** Every failing field, one entry per JSON pointer (schema rules first, in document order). */
export function labResultErrors(body: unknown, now: Date): FieldError[] {
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of [...schemaErrors(body), ...semanticErrors(body, now)]) {
    const pointer = pointerOf(e);
    if (seen.has(pointer)) continue;
    seen.add(pointer);
    out.push(e);
  }
  return out;
}

/**
 * Validates a parsed request body. Returns the submission with its normalised status, instant key
 * and results array; throws ValidationFailedError listing every failing field.
 */
export function acceptLabResult(body: unknown, now: Date): AcceptedSubmission {
  const errors = labResultErrors(body, now);
  if (errors.length > 0) throw new ValidationFailedError('the lab result failed validation', errors);
  const submission = body as LabResultSubmission;
  const data = submission.data;
  const results: LabTestResult[] = Array.isArray(data.results) ? data.results : [data.results];
  return { body: submission, status: normalizeStatus(data.status)!, resultedAtKey: resultedAtKey(data.ResultedDateUTC)!.key, results };
}
