/**
 * The chart import document (schemas/chart-import.schema.json): validation with every failing
 * JSON pointer, and the import itself. Used by `npm run import` and the local demo data, never on a
 * Lambda request path, so the validator is compiled once at module load.
 *
 * Error messages describe the rule that failed, never the value: a chart carries PHI.
 */
import Ajv2020, { type ErrorObject } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import chartImportSchema from '../../schemas/chart-import.schema.json';
import { CHART_ID_PATTERN, isCalendarDate, timelineInstant, type ChartEntry } from './chart-store';
import { checkAssessmentValues, checkEncounterValues, checkNoteValues, checkPatientValues, pointerOfPath, type RecordProblem } from './record-rules';
import type { Assessment, Encounter, Note, Patient } from './types';
import { untilInstant } from '../relationships/relationship-until';
import { DEFAULT_PURPOSE_OF_USE, PURPOSES_OF_USE, type PartnerPatientRelationship, type PurposeOfUse } from '../relationships/relationships';

type WithoutPatientId<T> = Omit<T, 'patientId'>;

export type ImportEncounter = WithoutPatientId<Encounter>;
export type ImportNote = WithoutPatientId<Note>;
export type ImportAssessment = WithoutPatientId<Assessment>;

/** A partner that serves the patient: made a relationship (source `import`) when the chart is imported. */
export interface ImportRelationship {
  partnerId: string;
  /** HL7 v3 PurposeOfUse, default TREAT */
  purpose?: PurposeOfUse;
  /** YYYY-MM-DD: holds through that day (UTC) */
  until?: string;
}

/** A patient with the patient's records; nested records take the patient's patientId. */
export interface ImportPatient extends Patient {
  encounters?: ImportEncounter[];
  notes?: ImportNote[];
  assessments?: ImportAssessment[];
  relationships?: ImportRelationship[];
}

export interface ChartImportDocument {
  $schema?: string;
  patients: ImportPatient[];
}

/** One failing place in the document: an RFC 6901 JSON pointer and what is wrong there. */
export interface ImportError {
  pointer: string;
  message: string;
}

export type ChartImportValidation = { ok: true; value: ChartImportDocument } | { ok: false; errors: ImportError[] };

export interface ChartImportCounts {
  patients: number;
  encounters: number;
  notes: number;
  assessments: number;
  /** partner-patient relationships the document carried, made or found holding */
  relationships: number;
  /** DynamoDB items written (patients + records) */
  items: number;
}

export type ChartImportResult = { ok: true; counts: ChartImportCounts } | { ok: false; errors: ImportError[] };

const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
addFormats(ajv, ['date', 'date-time', 'email']);
const validateSchema = ajv.compile<ChartImportDocument>(chartImportSchema);

if (chartImportSchema.$defs.relationship.properties.purpose.enum.join() !== PURPOSES_OF_USE.join()) {
  throw new Error('schemas/chart-import.schema.json purposes differ from PURPOSES_OF_USE');
}
if (chartImportSchema.$defs.id.pattern !== CHART_ID_PATTERN.source) {
  throw new Error('schemas/chart-import.schema.json id pattern differs from CHART_ID_PATTERN');
}

/** Messages for rules whose default ajv message would be cryptic, by the $defs entry that failed. */
const MESSAGE_BY_DEF: Record<string, string> = {
  id: 'must be 1-128 characters from A-Z a-z 0-9 . _ : -',
  identifier: 'must be 1-64 printable characters without HL7 delimiters (| ^ ~ \\ &)',
  date: 'must be a real calendar date YYYY-MM-DD',
  dateTime: 'must be a real ISO 8601 date-time with seconds and an offset, e.g. 2024-03-01T09:30:00Z',
  phone: 'must be a phone number (digits, spaces and + ( ) . / - x)',
};

function escapePointerToken(token: string | number): string {
  return String(token).replace(/~/g, '~0').replace(/\//g, '~1');
}

function pointerOf(error: ErrorObject): string {
  if (error.keyword === 'required') return `${error.instancePath}/${escapePointerToken((error.params as { missingProperty: string }).missingProperty)}`;
  if (error.keyword === 'additionalProperties')
    return `${error.instancePath}/${escapePointerToken((error.params as { additionalProperty: string }).additionalProperty)}`;
  return error.instancePath;
}

function messageOf(error: ErrorObject): string {
  switch (error.keyword) {
    case 'required':
      return 'is required';
    case 'additionalProperties':
      return 'is not a known property';
    case 'enum':
      return `must be one of ${((error.params as { allowedValues: unknown[] }).allowedValues ?? []).join(', ')}`;
    case 'pattern':
    case 'format': {
      const def = /\$defs\/([A-Za-z]+)\/(pattern|format)$/.exec(error.schemaPath)?.[1];
      if (def && MESSAGE_BY_DEF[def]) return MESSAGE_BY_DEF[def];
      if (error.keyword === 'format') return `must be a valid ${(error.params as { format: string }).format}`;
      return 'has characters that are not allowed';
    }
    default:
      return error.message ?? 'is invalid';
  }
}

/** Schema errors, one per pointer (the first rule that failed there); `if` wrappers dropped. */
function schemaErrors(doc: unknown): ImportError[] {
  if (validateSchema(doc)) return [];
  const errors: ImportError[] = [];
  const seen = new Set<string>();
  for (const error of validateSchema.errors ?? []) {
    if (error.keyword === 'if') continue; // the failing `then` rule is reported at its own pointer
    const pointer = pointerOf(error);
    if (seen.has(pointer)) continue;
    seen.add(pointer);
    errors.push({ pointer, message: messageOf(error) });
  }
  return errors;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const asArray = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function todayUtc(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/**
 * Rules the schema cannot express. Runs on whatever shape the document has (alongside schema
 * errors), so one pass reports every problem.
 */
function semanticErrors(doc: unknown, now: Date): ImportError[] {
  const errors: ImportError[] = [];
  if (!isObject(doc)) return errors;
  const patientIndexById = new Map<string, number>();
  asArray(doc.patients).forEach((patient, p) => {
    if (!isObject(patient)) return;
    const base = `/patients/${p}`;
    if (typeof patient.patientId === 'string') {
      const first = patientIndexById.get(patient.patientId);
      if (first !== undefined) errors.push({ pointer: `${base}/patientId`, message: `duplicates the patientId of /patients/${first}` });
      else patientIndexById.set(patient.patientId, p);
    }
    const birthDate = typeof patient.birthDate === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(patient.birthDate) : null;
    if (birthDate) {
      const [year, month, day] = birthDate.slice(1).map(Number);
      if (!isCalendarDate(year, month, day)) errors.push({ pointer: `${base}/birthDate`, message: MESSAGE_BY_DEF.date });
      else if (birthDate[0] > todayUtc(now)) errors.push({ pointer: `${base}/birthDate`, message: 'must not be in the future' });
    }

    // the record rules every intake path shares: the import refuses what the exports cannot write
    const { encounters: _e, notes: _n, assessments: _a, ...patientRecord } = patient;
    const recordErrors = (at: string, problems: RecordProblem[]) => {
      for (const problem of problems) errors.push({ pointer: `${at}${pointerOfPath(problem.path)}`, message: problem.message });
    };
    recordErrors(base, checkPatientValues(patientRecord as Partial<Patient>, now));
    for (const [listName, check] of [
      ['encounters', (r: Record<string, unknown>) => checkEncounterValues(r as Partial<Encounter>, now)],
      ['notes', (r: Record<string, unknown>) => checkNoteValues(r as Partial<Note>, now)],
      ['assessments', (r: Record<string, unknown>) => checkAssessmentValues(r as Partial<Assessment>, now)],
    ] as const) {
      asArray(patient[listName]).forEach((record, i) => {
        if (isObject(record)) recordErrors(`${base}/${listName}/${i}`, check(record));
      });
    }

    const uniqueIds = (listName: string, idField: string): Set<string> => {
      const firstIndex = new Map<string, number>();
      asArray(patient[listName]).forEach((record, i) => {
        if (!isObject(record) || typeof record[idField] !== 'string') return;
        const id = record[idField] as string;
        const first = firstIndex.get(id);
        if (first !== undefined)
          errors.push({ pointer: `${base}/${listName}/${i}/${idField}`, message: `duplicates the ${idField} of ${base}/${listName}/${first}` });
        else firstIndex.set(id, i);
      });
      return new Set(firstIndex.keys());
    };
    const encounterIds = uniqueIds('encounters', 'encounterId');
    uniqueIds('notes', 'noteId');
    uniqueIds('assessments', 'assessmentId');

    asArray(patient.encounters).forEach((encounter, i) => {
      if (!isObject(encounter)) return;
      const at = `${base}/encounters/${i}`;
      checkInstant(encounter.admitAt, `${at}/admitAt`, errors);
      checkInstant(encounter.dischargeAt, `${at}/dischargeAt`, errors);
      const admit = typeof encounter.admitAt === 'string' ? timelineInstant(encounter.admitAt) : undefined;
      const discharge = typeof encounter.dischargeAt === 'string' ? timelineInstant(encounter.dischargeAt) : undefined;
      if (admit && discharge && discharge < admit) errors.push({ pointer: `${at}/dischargeAt`, message: 'must not be before admitAt' });
      const orderIndexById = new Map<string, number>();
      asArray(encounter.orders).forEach((order, o) => {
        if (!isObject(order)) return;
        checkInstant(order.orderedAt, `${at}/orders/${o}/orderedAt`, errors);
        if (typeof order.orderId !== 'string') return;
        const first = orderIndexById.get(order.orderId);
        if (first !== undefined) errors.push({ pointer: `${at}/orders/${o}/orderId`, message: `duplicates the orderId of ${at}/orders/${first}` });
        else orderIndexById.set(order.orderId, o);
      });
    });

    for (const [listName, timeField] of [
      ['notes', 'createdAt'],
      ['assessments', 'performedAt'],
    ] as const) {
      asArray(patient[listName]).forEach((record, i) => {
        if (!isObject(record)) return;
        const at = `${base}/${listName}/${i}`;
        checkInstant(record[timeField], `${at}/${timeField}`, errors);
        if (typeof record.encounterId === 'string' && !encounterIds.has(record.encounterId)) {
          errors.push({ pointer: `${at}/encounterId`, message: `must name an encounter of this patient (${base}/encounters)` });
        }
      });
    }
  });
  return errors;
}

/** A date-time the schema accepted may still not be an instant (e.g. a leap second, 23:59:60). */
function checkInstant(value: unknown, pointer: string, errors: ImportError[]): void {
  if (typeof value !== 'string') return;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/.test(value)) return; // the schema reports the shape
  if (!timelineInstant(value)) errors.push({ pointer, message: MESSAGE_BY_DEF.dateTime });
}

/**
 * Validates an import document against the schema and the semantic rules. On failure lists every
 * failing place: one message per JSON pointer, schema rules first, then the semantic rules.
 */
export function validateChartImport(doc: unknown, now: Date = new Date()): ChartImportValidation {
  const errors = schemaErrors(doc);
  const reported = new Set(errors.map((e) => e.pointer));
  for (const error of semanticErrors(doc, now)) {
    if (reported.has(error.pointer)) continue;
    reported.add(error.pointer);
    errors.push(error);
  }
  if (errors.length > 0) return { ok: false, errors };
  return { ok: true, value: doc as ChartImportDocument };
}

/** The entries a valid document stores: each patient, then the patient's records. */
export function chartEntries(doc: ChartImportDocument): ChartEntry[] {
  const entries: ChartEntry[] = [];
  for (const { encounters = [], notes = [], assessments = [], relationships: _r, ...patient } of doc.patients) {
    const { patientId } = patient;
    entries.push({ kind: 'patient', record: patient });
    for (const encounter of encounters) entries.push({ kind: 'encounter', record: { patientId, ...encounter } });
    for (const note of notes) entries.push({ kind: 'note', record: { patientId, ...note } });
    for (const assessment of assessments) entries.push({ kind: 'assessment', record: { patientId, ...assessment } });
  }
  return entries;
}

/**
 * Where an import writes its entries. Deployed and local writers pass the forms domain's
 * ChartPatientWriter (lib/forms/chart-patient-writer.ts), which also keeps the form-matching index
 * in step; a bare ChartStore (chart-only tests) writes the chart alone.
 */
export interface ChartEntryWriter {
  putAll(entries: readonly ChartEntry[]): Promise<number>;
}

/**
 * An index of chart patients kept beside the chart (the HL7 intake's MRN index, lib/intake): the
 * chart-patient writer updates each one for every patient it writes, after the chart.
 */
export interface ChartPatientIndex {
  /** what the index is, for the import's summary line */
  readonly name: string;
  indexPatients(patients: readonly Patient[], now: Date): Promise<void>;
}

/** The relationships a valid document carries, as stored (source `import`, since `now`, made by `createdBy`). */
export function importRelationships(doc: ChartImportDocument, createdBy: string, now: Date): PartnerPatientRelationship[] {
  return doc.patients.flatMap((patient) =>
    (patient.relationships ?? []).map((r) => ({
      partnerId: r.partnerId,
      patientId: patient.patientId,
      purpose: r.purpose ?? DEFAULT_PURPOSE_OF_USE,
      source: 'import' as const,
      since: now.toISOString(),
      ...(r.until ? { until: untilInstant(r.until)! } : {}),
      createdBy,
    })),
  );
}

/** Where an import writes the relationships it carries (lib/relationships/relationships.ts relate). */
export interface ImportRelationshipWriter {
  readonly createdBy: string;
  relate(relationship: PartnerPatientRelationship, now: Date): Promise<unknown>;
}

/**
 * Validates, then (only when valid) upserts everything with BatchWriteItem, 25 items per call, then
 * the relationships the document carries (after their patients exist). An invalid document writes
 * nothing. A document with relationships needs a relationship writer (else nothing is written).
 */
export async function importChart(
  store: ChartEntryWriter,
  doc: unknown,
  relationships?: ImportRelationshipWriter,
  now = new Date(),
): Promise<ChartImportResult> {
  const validation = validateChartImport(doc);
  if (!validation.ok) return validation;
  const related = importRelationships(validation.value, relationships?.createdBy ?? 'import', now);
  if (related.length > 0 && !relationships)
    return { ok: false, errors: [{ pointer: '/patients', message: 'relationships can be imported only by a writer that may write them' }] };
  const entries = chartEntries(validation.value);
  const items = await store.putAll(entries);
  for (const relationship of related) await relationships!.relate(relationship, now);
  const count = (kind: ChartEntry['kind']) => entries.filter((e) => e.kind === kind).length;
  return {
    ok: true,
    counts: {
      patients: count('patient'),
      encounters: count('encounter'),
      notes: count('note'),
      assessments: count('assessment'),
      relationships: related.length,
      items,
    },
  };
}
