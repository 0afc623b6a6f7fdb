/**
 * Record rules: the one check of stored values that every intake path shares (chart import, HL7
 * ADT/MDM/ORU, POST /receiveTestData). A record these rules accept can be written by every export
 * (each HL7 message builder in lib/hl7, each FHIR resource builder in lib/fhir) and stored in
 * DynamoDB; test/hl7/export-totality.test.ts checks that on generated hostile records.
 *
 * Pure: no I/O, no clock (the caller passes `now`). Each check returns the problems it found, one per
 * path (`name.family`, `items.2.value`, `results.0.testName`); a message names the rule, never the
 * value (values are PHI).
 *
 * Rules
 *   - text: valid Unicode (no unpaired UTF-16 surrogate); no C0/C1 control characters (U+0000-U+001F,
 *     U+007F-U+009F) in one-line values; multi-line values (note text, reasons, interpretations,
 *     result values, text assessment answers) may hold CR, LF and TAB and no other control character.
 *     NUL is never accepted.
 *   - required names and texts hold printable content: at least one letter or digit.
 *   - lengths as the HL7 v2.5.1 fields allow (XPN family 194, given and middle 30, suffix and prefix
 *     20, ST 199 for one-line texts) and as the chart already allows (note text 65,536 characters,
 *     long texts 4,096), ids per CHART_ID_PATTERN.
 *   - clinical times: ISO 8601 with seconds and an offset, a real instant, 1900-01-01 or later and at
 *     most 5 minutes after `now`; birth dates real calendar dates, 1900 or later, not after today (UTC).
 *   - lab result partial times (PartialDateTime: `YYYY`, `YYYY-MM`, `YYYY-MM-DD`, minutes or seconds
 *     with an optional fraction, a time always with an offset): a real calendar time, 1900 or later,
 *     its earliest possible instant at most 5 minutes after `now` (a date is read at +14:00, the
 *     earliest zone, so a date that is already today somewhere on earth is not "in the future").
 *   - a partner's ADT content (visit, diagnoses, allergies): the same text, code, clinician and partial time
 *     rules; patient class a table 0004 code; at most 64 KiB as JSON.
 *   - size: a patient record at most 64 KiB as JSON, a note, an encounter, an assessment at most
 *     300 KiB (a DynamoDB item holds at most 400 KB).
 */
import { CHART_ID_PATTERN, isCalendarDate, timelineInstant } from './chart-items';
import type {
  Address,
  Assessment,
  AssessmentItem,
  Clinician,
  CodedValue,
  Encounter,
  EncounterOrder,
  NextOfKin,
  Note,
  PartnerAllergy,
  PartnerDiagnosis,
  PartnerVisit,
  Patient,
  PersonName,
} from './types';

/** One failing value: where (dotted path within the record) and which rule it breaks. */
export interface RecordProblem {
  path: string;
  message: string;
}

export const RECORD_LIMITS = {
  earliestYear: 1900,
  /** how far after `now` a clinical time may lie (clock skew) */
  futureSkewMs: 5 * 60 * 1000,
  /** XPN-1 (FN) 194, XPN-2 30, XPN-3 30, XPN-4 20, XPN-5 20 (HL7 v2.5.1 chapter 2A) */
  familyName: 194,
  givenName: 30,
  middleName: 30,
  suffix: 20,
  prefix: 20,
  /** ST */
  shortText: 199,
  /** the chart import's long texts (encounter reason, assessment interpretation, text answers) */
  longText: 4096,
  /** note text, characters (the chart import's existing limit) */
  noteText: 65_536,
  /** MRN and assigning authority (the chart import's identifier) */
  identifier: 64,
  code: 64,
  codingSystem: 32,
  phone: 32,
  email: 254,
  postalCode: 16,
  country: 64,
  /** a clinician id (written in its short form, lib/hl7/identifiers.ts) */
  clinicianId: 128,
  /** lab result: test name, units, reference range, report name and type, result value */
  testName: 256,
  units: 64,
  referenceRange: 256,
  resultValue: 65_536,
  reportName: 255,
  reportType: 64,
  /** lab result: NTE comment (FT) and TX/FT line, characters */
  comment: 65_536,
  /** EI-1 / EI-2 (placer order number, accession namespace, specimen id) */
  entityIdentifier: 199,
  /** whole records as JSON, UTF-8 bytes */
  patientRecordBytes: 64 * 1024,
  noteRecordBytes: 300 * 1024,
  encounterRecordBytes: 300 * 1024,
  assessmentRecordBytes: 300 * 1024,
} as const;

const CONTROL_ONE_LINE = /[\u0000-\u001F\u007F-\u009F]/;
const CONTROL_MULTI_LINE = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F]/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const LETTER_OR_DIGIT = /[\p{L}\p{N}]/u;
const HL7_DELIMITER = /[|^~\\&]/;
const ISO_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;
const ISO_DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

export const RECORD_RULE_MESSAGES = {
  notText: 'must be text',
  required: 'is required',
  printable: 'must hold a letter or a digit',
  controlOneLine: 'must not hold control characters or line breaks',
  controlMultiLine: 'must not hold control characters other than line breaks and tabs',
  surrogate: 'must be valid Unicode text (no unpaired surrogates)',
  delimiter: 'must not hold HL7 delimiters (| ^ ~ \\ &)',
  untrimmed: 'must not begin or end with white space',
  id: 'must be 1-128 characters from A-Z a-z 0-9 . _ : -',
  dateTime: 'must be a real ISO 8601 date-time with seconds and an offset, e.g. 2024-03-01T09:30:00Z',
  tooEarly: `must be in ${RECORD_LIMITS.earliestYear} or later`,
  future: 'must not be more than 5 minutes in the future',
  date: 'must be a real calendar date YYYY-MM-DD',
  futureDate: 'must not be in the future',
  number: 'must be a finite number',
  partialDateTime:
    'must be a real date or date-time with its precision (YYYY, YYYY-MM, YYYY-MM-DD, or a time with minutes or seconds and an offset, e.g. 2024-03-01T09:30-05:00)',
  kind: 'must be numeric, text or coded',
} as const;

const tooLong = (max: number) => `must be at most ${max} characters`;
const tooLarge = (max: number) => `the record must be at most ${max} bytes as JSON`;

interface TextRule {
  max: number;
  /** CR, LF, TAB allowed */
  multiLine?: boolean;
  /** must hold a letter or a digit */
  content?: boolean;
  /** no HL7 delimiters (identifiers that are matched as written) */
  noDelimiters?: boolean;
  /** no white space at either end (identifiers: written to PID-3 as stored, matched in normal form) */
  trimmed?: boolean;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const join = (base: string, key: string | number) => (base === '' ? String(key) : `${base}.${key}`);

/** Collects problems; one per path (the first rule a value breaks). */
class Problems {
  readonly list: RecordProblem[] = [];
  private readonly seen = new Set<string>();

  add(path: string, message: string): void {
    if (this.seen.has(path)) return;
    this.seen.add(path);
    this.list.push({ path, message });
  }

  /** A text value; `undefined` is accepted unless `required`. */
  text(path: string, value: unknown, rule: TextRule, required = false): void {
    if (value === undefined) {
      if (required) this.add(path, RECORD_RULE_MESSAGES.required);
      return;
    }
    if (typeof value !== 'string') return this.add(path, RECORD_RULE_MESSAGES.notText);
    const problem = textProblem(value, rule);
    if (problem) this.add(path, problem);
  }

  instant(path: string, value: unknown, now: Date, required = false): void {
    if (value === undefined) {
      if (required) this.add(path, RECORD_RULE_MESSAGES.required);
      return;
    }
    const problem = instantProblem(value, now);
    if (problem) this.add(path, problem);
  }

  partialDateTime(path: string, value: unknown, now: Date): void {
    if (value === undefined) return;
    const problem = partialDateTimeProblem(value, now);
    if (problem) this.add(path, problem);
  }
}

/** The checks of chart records beside the text and time rules: ids, numbers, the record's size (no lab result check uses them). */
class RecordProblems extends Problems {
  id(path: string, value: unknown, required = false): void {
    if (value === undefined) {
      if (required) this.add(path, RECORD_RULE_MESSAGES.required);
      return;
    }
    if (typeof value !== 'string' || !CHART_ID_PATTERN.test(value)) this.add(path, RECORD_RULE_MESSAGES.id);
  }

  number(path: string, value: unknown): void {
    if (value !== undefined && (typeof value !== 'number' || !Number.isFinite(value))) this.add(path, RECORD_RULE_MESSAGES.number);
  }

  size(path: string, record: unknown, max: number): void {
    if (jsonBytes(record) > max) this.add(path, tooLarge(max));
  }
}

/** The rule a text value breaks, if any. */
function textProblem(value: string, rule: TextRule): string | undefined {
  if (LONE_SURROGATE.test(value)) return RECORD_RULE_MESSAGES.surrogate;
  if ((rule.multiLine ? CONTROL_MULTI_LINE : CONTROL_ONE_LINE).test(value)) {
    return rule.multiLine ? RECORD_RULE_MESSAGES.controlMultiLine : RECORD_RULE_MESSAGES.controlOneLine;
  }
  if (value.length > rule.max) return tooLong(rule.max);
  if (rule.noDelimiters && HL7_DELIMITER.test(value)) return RECORD_RULE_MESSAGES.delimiter;
  if (rule.trimmed && value.trim() !== value) return RECORD_RULE_MESSAGES.untrimmed;
  if (rule.content && !LETTER_OR_DIGIT.test(value)) return RECORD_RULE_MESSAGES.printable;
  return undefined;
}

/** The rule a clinical time breaks, if any: a real instant in [1900-01-01, now + 5 minutes]. */
export function instantProblem(value: unknown, now: Date): string | undefined {
  if (typeof value !== 'string' || !ISO_INSTANT.test(value)) return RECORD_RULE_MESSAGES.dateTime;
  const utc = timelineInstant(value);
  if (!utc) return RECORD_RULE_MESSAGES.dateTime;
  if (Number(utc.slice(0, 4)) < RECORD_LIMITS.earliestYear) return RECORD_RULE_MESSAGES.tooEarly;
  if (Date.parse(utc) > now.getTime() + RECORD_LIMITS.futureSkewMs) return RECORD_RULE_MESSAGES.future;
  return undefined;
}

const PARTIAL_DATE_TIME = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?)?(Z|([+-])(\d{2}):(\d{2})))?)?)?$/;

/**
 * The rule a PartialDateTime (lib/chart/types.ts) breaks, if any: its precision is kept as written;
 * it must name a real calendar time, in 1900 or later, whose earliest instant lies at most 5 minutes
 * after `now` (a value without a time is read at +14:00, the earliest zone on earth).
 */
export function partialDateTimeProblem(value: unknown, now: Date): string | undefined {
  const m = typeof value === 'string' ? PARTIAL_DATE_TIME.exec(value) : null;
  if (!m) return RECORD_RULE_MESSAGES.partialDateTime;
  const [, y, mo = '01', d = '01', h = '00', mi = '00', s = '00', zone, sign, oh = '00', om = '00'] = m;
  const [year, month, day, hour, minute, second] = [y, mo, d, h, mi, s].map(Number) as [number, number, number, number, number, number];
  if (!isCalendarDate(year, month, day) || hour > 23 || minute > 59 || second > 59 || Number(oh) > 14 || Number(om) > 59)
    return RECORD_RULE_MESSAGES.partialDateTime;
  if (year < RECORD_LIMITS.earliestYear) return RECORD_RULE_MESSAGES.tooEarly;
  const offsetMinutes = zone === undefined ? 14 * 60 : zone === 'Z' ? 0 : (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  const earliest = Date.UTC(year, month - 1, day, hour, minute, second) - offsetMinutes * 60_000;
  if (earliest > now.getTime() + RECORD_LIMITS.futureSkewMs) return RECORD_RULE_MESSAGES.future;
  return undefined;
}

/** UTF-8 bytes of the value as JSON. */
function jsonBytes(value: unknown): number {
  try {
    return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
  } catch {
    return Number.POSITIVE_INFINITY; // a cycle or a BigInt is no storable record
  }
}

const SHORT: TextRule = { max: RECORD_LIMITS.shortText };
const LONG: TextRule = { max: RECORD_LIMITS.longText, multiLine: true };

function checkName(problems: Problems, path: string, name: unknown, required: boolean): void {
  if (name === undefined) {
    if (required) problems.add(path, RECORD_RULE_MESSAGES.required);
    return;
  }
  if (!isObject(name)) return problems.add(path, RECORD_RULE_MESSAGES.required);
  const n = name as Partial<PersonName>;
  problems.text(join(path, 'family'), n.family, { max: RECORD_LIMITS.familyName, content: true }, true);
  problems.text(join(path, 'given'), n.given, { max: RECORD_LIMITS.givenName });
  problems.text(join(path, 'middle'), n.middle, { max: RECORD_LIMITS.middleName });
  problems.text(join(path, 'suffix'), n.suffix, { max: RECORD_LIMITS.suffix });
  problems.text(join(path, 'prefix'), n.prefix, { max: RECORD_LIMITS.prefix });
}

function checkCoded(problems: Problems, path: string, coded: unknown, required: boolean): void {
  if (coded === undefined) {
    if (required) problems.add(path, RECORD_RULE_MESSAGES.required);
    return;
  }
  if (!isObject(coded)) return problems.add(path, RECORD_RULE_MESSAGES.required);
  const c = coded as Partial<CodedValue>;
  problems.text(join(path, 'code'), c.code, { max: RECORD_LIMITS.code, content: true }, true);
  problems.text(join(path, 'display'), c.display, SHORT);
  problems.text(join(path, 'system'), c.system, { max: RECORD_LIMITS.codingSystem });
}

function checkClinician(problems: Problems, path: string, clinician: unknown, required: boolean): void {
  if (clinician === undefined) {
    if (required) problems.add(path, RECORD_RULE_MESSAGES.required);
    return;
  }
  if (!isObject(clinician)) return problems.add(path, RECORD_RULE_MESSAGES.required);
  const c = clinician as Partial<Clinician>;
  problems.text(join(path, 'id'), c.id, { max: RECORD_LIMITS.clinicianId });
  checkName(problems, join(path, 'name'), c.name, true);
}

function checkAddress(problems: Problems, path: string, address: unknown): void {
  if (address === undefined) return;
  if (!isObject(address)) return problems.add(path, RECORD_RULE_MESSAGES.required);
  const a = address as Partial<Address>;
  for (const key of ['line1', 'line2', 'city', 'state'] as const) problems.text(join(path, key), a[key], SHORT);
  problems.text(join(path, 'postalCode'), a.postalCode, { max: RECORD_LIMITS.postalCode });
  problems.text(join(path, 'country'), a.country, { max: RECORD_LIMITS.country });
}

function list(problems: Problems, path: string, value: unknown, each: (path: string, item: unknown) => void): void {
  if (value === undefined) return;
  if (!Array.isArray(value)) return problems.add(path, 'must be a list');
  value.forEach((item, index) => each(join(path, index), item));
}

/**
 * A patient record (or the fields of one an intake path is about to write: only the fields present
 * are checked, but a present name needs its family name).
 */
export function checkPatientValues(p: Partial<Patient>, now: Date): RecordProblem[] {
  const problems = new RecordProblems();
  problems.id('patientId', p.patientId);
  const identifier: TextRule = { max: RECORD_LIMITS.identifier, content: true, noDelimiters: true, trimmed: true };
  problems.text('mrn', p.mrn, identifier);
  problems.text('assigningAuthority', p.assigningAuthority, identifier);
  checkName(problems, 'name', p.name, false);
  if (p.birthDate !== undefined) {
    const match = typeof p.birthDate === 'string' ? ISO_DATE.exec(p.birthDate) : null;
    if (!match || !isCalendarDate(Number(match[1]), Number(match[2]), Number(match[3]))) problems.add('birthDate', RECORD_RULE_MESSAGES.date);
    else if (Number(match[1]) < RECORD_LIMITS.earliestYear) problems.add('birthDate', RECORD_RULE_MESSAGES.tooEarly);
    else if (p.birthDate > now.toISOString().slice(0, 10)) problems.add('birthDate', RECORD_RULE_MESSAGES.futureDate);
  }
  if (p.sex !== undefined && !['A', 'F', 'M', 'N', 'O', 'U'].includes(p.sex)) problems.add('sex', 'must be an HL7 table 0001 code');
  checkAddress(problems, 'address', p.address);
  problems.text('phone', p.phone, { max: RECORD_LIMITS.phone });
  problems.text('email', p.email, { max: RECORD_LIMITS.email });
  for (const key of ['maritalStatus', 'language', 'race', 'ethnicity'] as const) checkCoded(problems, key, p[key], false);
  checkClinician(problems, 'primaryCareProvider', p.primaryCareProvider, false);
  list(problems, 'nextOfKin', p.nextOfKin, (path, kin) => {
    if (!isObject(kin)) return problems.add(path, RECORD_RULE_MESSAGES.required);
    const k = kin as Partial<NextOfKin>;
    checkName(problems, join(path, 'name'), k.name, true);
    checkCoded(problems, join(path, 'relationship'), k.relationship, false);
    problems.text(join(path, 'phone'), k.phone, { max: RECORD_LIMITS.phone });
  });
  problems.size('', p, RECORD_LIMITS.patientRecordBytes);
  return problems.list;
}

/** A note (chart note or a partner's document). */
export function checkNoteValues(n: Partial<Note>, now: Date): RecordProblem[] {
  const problems = new RecordProblems();
  problems.id('patientId', n.patientId);
  problems.id('noteId', n.noteId);
  problems.id('encounterId', n.encounterId);
  checkClinician(problems, 'author', n.author, false);
  problems.instant('createdAt', n.createdAt, now);
  problems.text('text', n.text, { max: RECORD_LIMITS.noteText, multiLine: true, content: true });
  problems.size('', n, RECORD_LIMITS.noteRecordBytes);
  return problems.list;
}

/** An encounter with its diagnoses and orders. */
export function checkEncounterValues(e: Partial<Encounter>, now: Date): RecordProblem[] {
  const problems = new RecordProblems();
  problems.id('patientId', e.patientId);
  problems.id('encounterId', e.encounterId);
  if (e.patientClass !== undefined && !['B', 'C', 'E', 'I', 'N', 'O', 'P', 'R', 'U'].includes(e.patientClass)) {
    problems.add('patientClass', 'must be an HL7 table 0004 code');
  }
  problems.text('location', e.location, SHORT);
  checkClinician(problems, 'attending', e.attending, false);
  problems.instant('admitAt', e.admitAt, now);
  problems.instant('dischargeAt', e.dischargeAt, now);
  problems.text('reason', e.reason, LONG);
  list(problems, 'diagnoses', e.diagnoses, (path, diagnosis) => checkCoded(problems, path, diagnosis, true));
  list(problems, 'orders', e.orders, (path, order) => {
    if (!isObject(order)) return problems.add(path, RECORD_RULE_MESSAGES.required);
    const o = order as Partial<EncounterOrder>;
    problems.id(join(path, 'orderId'), o.orderId, true);
    checkCoded(problems, join(path, 'code'), o.code, true);
    problems.instant(join(path, 'orderedAt'), o.orderedAt, now);
    problems.text(join(path, 'status'), o.status, { max: 32 });
    checkClinician(problems, join(path, 'orderingProvider'), o.orderingProvider, false);
  });
  problems.size('', e, RECORD_LIMITS.encounterRecordBytes);
  return problems.list;
}

const PATIENT_CLASSES = ['B', 'C', 'E', 'I', 'N', 'O', 'P', 'R', 'U'];

/**
 * What one partner ADT says about the visit and the person's problems (PV1, DG1, AL1), before it is
 * kept in the partner's own view of the person. Paths: `visit.admitAt`, `diagnoses.1.code.code`,
 * `allergies.0.reactions.2`.
 */
export function checkPartnerAdtContentValues(
  content: { visit?: Partial<PartnerVisit>; diagnoses?: unknown[]; allergies?: unknown[] },
  now: Date,
): RecordProblem[] {
  const problems = new RecordProblems();
  const visit = content.visit;
  if (visit !== undefined) {
    problems.text('visit.visitNumber', visit.visitNumber, { max: RECORD_LIMITS.identifier, content: true, noDelimiters: true });
    if (visit.patientClass !== undefined && !PATIENT_CLASSES.includes(visit.patientClass)) problems.add('visit.patientClass', 'must be an HL7 table 0004 code');
    problems.text('visit.location', visit.location, SHORT);
    checkClinician(problems, 'visit.attending', visit.attending, false);
    problems.partialDateTime('visit.admitAt', visit.admitAt, now);
    problems.partialDateTime('visit.dischargeAt', visit.dischargeAt, now);
  }
  list(problems, 'diagnoses', content.diagnoses, (path, diagnosis) => {
    if (!isObject(diagnosis)) return problems.add(path, RECORD_RULE_MESSAGES.required);
    const d = diagnosis as Partial<PartnerDiagnosis>;
    checkCoded(problems, join(path, 'code'), d.code, true);
    problems.text(join(path, 'type'), d.type, { max: RECORD_LIMITS.code });
    problems.partialDateTime(join(path, 'at'), d.at, now);
  });
  list(problems, 'allergies', content.allergies, (path, allergy) => {
    if (!isObject(allergy)) return problems.add(path, RECORD_RULE_MESSAGES.required);
    const a = allergy as Partial<PartnerAllergy>;
    checkCoded(problems, join(path, 'allergen'), a.allergen, true);
    checkCoded(problems, join(path, 'type'), a.type, false);
    checkCoded(problems, join(path, 'severity'), a.severity, false);
    list(problems, join(path, 'reactions'), a.reactions, (reactionPath, reaction) => problems.text(reactionPath, reaction, { ...SHORT, content: true }, true));
  });
  problems.size('', content, RECORD_LIMITS.patientRecordBytes);
  return problems.list;
}

function checkAssessmentItem(problems: Problems, path: string, item: unknown): void {
  if (!isObject(item)) return problems.add(path, RECORD_RULE_MESSAGES.required);
  const i = item as Partial<AssessmentItem>;
  checkCoded(problems, join(path, 'code'), i.code, true);
  problems.text(join(path, 'units'), i.units, { max: 32 });
  const value = join(path, 'value');
  switch (i.kind) {
    case 'numeric':
      if (typeof i.value !== 'number' || !Number.isFinite(i.value)) problems.add(value, RECORD_RULE_MESSAGES.number);
      return;
    case 'text':
      return problems.text(value, i.value, { ...LONG, content: true }, true);
    case 'coded':
      return checkCoded(problems, value, i.value, true);
    default:
      problems.add(join(path, 'kind'), RECORD_RULE_MESSAGES.kind);
  }
}

/** An assessment (questionnaire score) with its items. */
export function checkAssessmentValues(a: Partial<Assessment>, now: Date): RecordProblem[] {
  const problems = new RecordProblems();
  problems.id('patientId', a.patientId);
  problems.id('assessmentId', a.assessmentId);
  problems.id('encounterId', a.encounterId);
  checkCoded(problems, 'code', a.code, false);
  problems.instant('performedAt', a.performedAt, now);
  checkClinician(problems, 'performer', a.performer, false);
  list(problems, 'items', a.items, (path, item) => checkAssessmentItem(problems, path, item));
  problems.number('total', a.total);
  problems.text('interpretation', a.interpretation, LONG);
  problems.size('', a, RECORD_LIMITS.assessmentRecordBytes);
  return problems.list;
}

const ONE_LINE_CODE: TextRule = { max: RECORD_LIMITS.code };
const COMMENT: TextRule = { max: RECORD_LIMITS.comment, multiLine: true };
const ENTITY_ID: TextRule = { max: RECORD_LIMITS.entityIdentifier, content: true };

/** A lab Coding (lib/chart/types.ts): code, display, system; the schema gives the shape. */
function checkLabCoding(problems: Problems, path: string, coding: unknown): void {
  if (!isObject(coding)) return;
  problems.text(join(path, 'code'), coding.code, ONE_LINE_CODE);
  problems.text(join(path, 'display'), coding.display, SHORT);
  problems.text(join(path, 'system'), coding.system, { max: RECORD_LIMITS.codingSystem });
}

function checkEntityIdentifier(problems: Problems, path: string, identifier: unknown): void {
  if (!isObject(identifier)) return;
  problems.text(join(path, 'id'), identifier.id, ENTITY_ID);
  problems.text(join(path, 'namespace'), identifier.namespace, ENTITY_ID);
}

function checkTextList(problems: Problems, path: string, value: unknown, rule: TextRule): void {
  if (!Array.isArray(value)) return;
  value.forEach((text, index) => problems.text(join(path, index), text, rule));
}

/** The optional fields of one lab test (issue 27): codes, typed values, units code, organisation, comments, time. */
function checkLabTestExtras(problems: Problems, path: string, result: Record<string, unknown>, now: Date): void {
  checkLabCoding(problems, join(path, 'alternateCode'), result.alternateCode);
  checkLabCoding(problems, join(path, 'codedValue'), result.codedValue);
  checkTextList(problems, join(path, 'textLines'), result.textLines, COMMENT);
  problems.text(join(path, 'unitsCode'), result.unitsCode, { max: RECORD_LIMITS.units });
  problems.text(join(path, 'referenceRangeUnits'), result.referenceRangeUnits, { max: RECORD_LIMITS.units });
  problems.text(join(path, 'referenceRangeUnitsCode'), result.referenceRangeUnitsCode, { max: RECORD_LIMITS.units });
  problems.text(join(path, 'performingOrganization'), result.performingOrganization, { ...SHORT, content: true });
  checkTextList(problems, join(path, 'comments'), result.comments, COMMENT);
  problems.partialDateTime(join(path, 'observedAt'), result.observedAt, now);
  problems.partialDateTime(join(path, 'reportedAt'), result.reportedAt, now);
}

/** `data.order` of a lab result (issue 27): placer number, namespaces, service, times, provider, specimen, comments. */
function checkLabOrder(problems: Problems, path: string, order: unknown, now: Date): void {
  if (!isObject(order)) return;
  checkEntityIdentifier(problems, join(path, 'placerOrderNumber'), order.placerOrderNumber);
  problems.text(join(path, 'accessionNamespace'), order.accessionNamespace, ENTITY_ID);
  checkLabCoding(problems, join(path, 'universalService'), order.universalService);
  problems.partialDateTime(join(path, 'collectedAt'), order.collectedAt, now);
  if (isObject(order.orderingProvider)) checkClinician(problems, join(path, 'orderingProvider'), order.orderingProvider, false);
  if (Array.isArray(order.performer))
    order.performer.forEach((performer, index) => {
      if (!isObject(performer)) return;
      problems.text(join(join(join(path, 'performer'), index), 'name'), performer.name, { ...SHORT, content: true });
      checkEntityIdentifier(problems, join(join(join(path, 'performer'), index), 'identifier'), performer.identifier);
    });
  if (isObject(order.specimen)) {
    const specimen = join(path, 'specimen');
    checkLabCoding(problems, join(specimen, 'type'), order.specimen.type);
    problems.partialDateTime(join(specimen, 'collectedAt'), order.specimen.collectedAt, now);
    checkEntityIdentifier(problems, join(specimen, 'id'), order.specimen.id);
  }
  checkTextList(problems, join(path, 'comments'), order.comments, COMMENT);
}

/**
 * `data` of a lab result submission (POST /receiveTestData, HL7 ORU^R01 groups: the shape of
 * lib/results/validation.ts). Runs on whatever shape the body has; the schema reports shapes and
 * the ids' patterns, these rules the values. Paths are relative to `data` (`results.0.testName`).
 */
export function checkLabResultValues(data: unknown, now: Date): RecordProblem[] {
  const problems = new Problems();
  if (!isObject(data)) return problems.list;
  // ids: the schema's printable-ASCII pattern already keeps them non-empty after escaping; no letter is required
  // (a sender id the partner does not own must still be answered 403, not 400)
  const id: TextRule = { max: 128 };
  for (const key of ['senderID', 'patientID', 'accessionNumber', 'recordNo'] as const) problems.text(key, data[key], id);
  if (typeof data.ResultedDateUTC === 'string') problems.instant('ResultedDateUTC', data.ResultedDateUTC, now);
  const results = Array.isArray(data.results) ? data.results : isObject(data.results) ? [data.results] : [];
  const base = Array.isArray(data.results) ? 'results' : undefined;
  results.forEach((result, index) => {
    if (!isObject(result)) return;
    const path = base ? join(base, index) : 'results';
    problems.text(join(path, 'testName'), result.testName, { max: RECORD_LIMITS.testName, content: true });
    problems.text(join(path, 'result'), result.result, { max: RECORD_LIMITS.resultValue, multiLine: true });
    problems.text(join(path, 'units'), result.units, { max: RECORD_LIMITS.units });
    problems.text(join(path, 'referenceRange'), result.referenceRange, { max: RECORD_LIMITS.referenceRange });
    problems.text(join(path, 'code'), result.code, { max: RECORD_LIMITS.code, content: true });
    checkLabTestExtras(problems, path, result, now);
  });
  checkLabOrder(problems, 'order', data.order, now);
  if (Array.isArray(data.reports)) {
    data.reports.forEach((report, index) => {
      if (!isObject(report)) return;
      const path = join('reports', index);
      problems.text(join(path, 'name'), report.name, { max: RECORD_LIMITS.reportName, content: true });
      problems.text(join(path, 'type'), report.type, { max: RECORD_LIMITS.reportType });
      problems.text(join(path, 'source'), report.source, { max: 32 });
      // base64 data is checked by the lab result validation; text reports are multi-line text
      if (typeof report.source === 'string' && report.source.toLowerCase() !== 'base64') {
        problems.text(join(path, 'data'), report.data, { max: Number.MAX_SAFE_INTEGER, multiLine: true });
      }
    });
  }
  return problems.list;
}

/** `results.0.testName` -> `/results/0/testName` (RFC 6901; the record paths hold no `/` or `~`). */
export function pointerOfPath(path: string): string {
  return path === '' ? '' : `/${path.split('.').join('/')}`;
}
