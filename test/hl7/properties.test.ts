/**
 * Property tests: chart data with hostile text in every text field (names, address, telecoms, note text,
 * assessment text, display texts, locations, ids, header namespaces) must give a message that
 * - the independent structure validator accepts,
 * - @medplum/core and hl7v2 both split into exactly the expected segments,
 * - gives back every value (modulo the documented transforms, see round-trip.ts),
 * - declares MSH-18 `UNICODE UTF-8` if and only if it holds a character outside ASCII.
 * Fixed seeds; 200 runs per builder.
 */
import { createHash } from 'node:crypto';
import fc from 'fast-check';
import type { Assessment, AssessmentItem, ChartRecord, Clinician, CodedValue, Encounter, Note, Patient, PersonName } from '../../lib/chart/types';
import {
  encodeAssessmentMessage,
  encodeEncounterMessage,
  encodeNoteMessage,
  encodePatientAdtMessage,
  encodePatientSummaryMessage,
  type LabResultSummary,
  type MessageHeaderContext,
} from '../../lib/hl7';
import * as arb from './arbitraries';
import type { ValueAddress } from './parsers';
import { type ExpectedValue, parsedSegmentNames, roundTripFailures, type ValueKind } from './round-trip';
import { receiverRuleIssues } from './receiver-rules';
import { validateHl7Message } from './structure-validator';

const RUNS = 200;

/*
 * Identifier short forms and coding system names, written here again from README / identifiers.ts's
 * description (not imported from the encoder): an id that fits and holds only printable ASCII other
 * than space, `_` and the delimiters is kept; any other is `_` + the first (max - 1) base-32 digits
 * (0-9 A-Z without I L O U) of its SHA-256; an id that already is such a short form of that length is kept.
 */
const BASE32 = '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
/** `keepBlank`: a blank id is written as it is (an optional CX/EI value); the lab's local code is always the id's short form. */
function expectedShortId(id: string | undefined, max: number, keepBlank = true): string | undefined {
  if (id === undefined || (keepBlank && id.trim() === '')) return id;
  if (id.length <= max && /^[!-~]+$/.test(id) && !/[|^~\\&_]/.test(id)) return id;
  // a short form that comes back (exactly max long: `_` + max - 1 base-32 digits) is kept as it is
  if (id.length === max && /^_[0-9A-HJKMNP-TV-Z]+$/.test(id)) return id;
  const bits = [...createHash('sha256').update(id, 'utf8').digest()].map((byte) => byte.toString(2).padStart(8, '0')).join('');
  let digits = '';
  for (let index = 0; index + 5 <= bits.length && digits.length < max - 1; index += 5) digits += BASE32[parseInt(bits.slice(index, index + 5), 2)];
  return `_${digits}`;
}
function expectedSystem(system: string | undefined): string | undefined {
  return system !== undefined && ['I10', 'ICD-10-CM', 'ICD10CM'].includes(system.trim().toUpperCase()) ? 'I10C' : system;
}
function namespaces(header: MessageHeaderContext): { entity: string; clinician: string; visit: string } {
  const given = header.identifierNamespaces ?? {};
  return { entity: given.entity || header.sendingFacility, clinician: given.clinician || header.sendingFacility, visit: given.visit || header.sendingFacility };
}
function documentNumberLength(header: MessageHeaderContext): number {
  return Math.max(8, Math.min(22, 29 - namespaces(header).entity.length));
}
/** The receiver rules that do not depend on the data being complete (hostile data may lack an authority or a code system). */
const ENCODER_RULES = /offset|formatting|OBR-7|OBR-25|ORC-1|longer than|MSH-15|ST value/;

/** The message a builder should produce, described independently of the encoder. */
class ExpectedMessage {
  readonly segmentNames: string[] = ['MSH'];
  readonly values: ExpectedValue[] = [];
  private readonly occurrences = new Map<string, number>();

  /** Appends a segment; returns its occurrence index among segments of the same name. */
  segment(name: string): number {
    const occurrence = this.occurrences.get(name) ?? 0;
    this.occurrences.set(name, occurrence + 1);
    this.segmentNames.push(name);
    return occurrence;
  }

  value(at: ValueAddress, value: string | undefined, kind: ValueKind = 'text'): void {
    this.values.push({ at, value: value ?? '', kind });
  }

  name(segment: string, occurrence: number, field: number, name: PersonName, firstComponent = 1, repetition?: number): void {
    const parts = [name.family, name.given, name.middle, name.suffix, name.prefix];
    parts.forEach((part, index) => this.value({ segment, occurrence, field, component: firstComponent + index, repetition }, part));
  }

  clinician(segment: string, occurrence: number, field: number, clinician: Clinician): void {
    this.value({ segment, occurrence, field, component: 1 }, clinician.id !== undefined && clinician.id.trim() === '' ? '' : expectedShortId(clinician.id, 15));
    this.name(segment, occurrence, field, clinician.name, 2);
  }

  coded(segment: string, occurrence: number, field: number, coded: CodedValue): void {
    this.value({ segment, occurrence, field, component: 1 }, coded.code);
    this.value({ segment, occurrence, field, component: 2 }, coded.display);
    this.value({ segment, occurrence, field, component: 3 }, expectedSystem(coded.system));
  }
}

const NON_ASCII = /[^\u0000-\u007F]/;
const NM = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;
const LINE_BREAK = /[\r\n\u0085\u2028\u2029]/;

/** ST for one short line; TX (one repetition per line) for several lines or more than 199 characters. */
function textKind(text: string): { type: 'ST' | 'TX'; kind: ValueKind } {
  return LINE_BREAK.test(text) || text.length > 199 ? { type: 'TX', kind: 'lines' } : { type: 'ST', kind: 'text' };
}

function checkMessage(message: string, structure: string, expected: ExpectedMessage): void {
  const report = validateHl7Message(message);
  expect(report.issues).toEqual([]);
  expect(report.structure).toBe(structure);
  expect(parsedSegmentNames(message)).toEqual({ medplum: expected.segmentNames, hl7v2: expected.segmentNames });
  const msh18 = message.split('\r')[0]?.split('|')[17] ?? '';
  expect(msh18 === 'UNICODE UTF-8').toBe(NON_ASCII.test(message));
  expect(roundTripFailures(message, expected.values)).toEqual([]);
  expect(receiverRuleIssues(message).filter((found) => ENCODER_RULES.test(found.message))).toEqual([]);
}

function expectHeader(expected: ExpectedMessage, header: MessageHeaderContext, trigger: string, structure: string): void {
  expected.value({ segment: 'MSH', field: 3 }, header.sendingApplication);
  expected.value({ segment: 'MSH', field: 4 }, header.sendingFacility);
  expected.value({ segment: 'MSH', field: 5 }, header.receivingApplication);
  expected.value({ segment: 'MSH', field: 6 }, header.receivingFacility);
  expected.value({ segment: 'MSH', field: 9, component: 2 }, trigger);
  expected.value({ segment: 'MSH', field: 9, component: 3 }, structure);
  expected.value({ segment: 'MSH', field: 10 }, header.controlId);
}

function expectPatient(expected: ExpectedMessage, patient: Patient, detail: 'core' | 'full'): void {
  const pid = expected.segment('PID');
  expected.value({ segment: 'PID', occurrence: pid, field: 3, component: 1 }, expectedShortId(patient.mrn, 15));
  expected.value({ segment: 'PID', occurrence: pid, field: 3, component: 4 }, patient.assigningAuthority);
  expected.value({ segment: 'PID', occurrence: pid, field: 3, component: 5 }, 'MR');
  expected.name('PID', pid, 5, patient.name);
  expected.value({ segment: 'PID', occurrence: pid, field: 7 }, patient.birthDate?.replace(/-/g, ''));
  expected.value({ segment: 'PID', occurrence: pid, field: 8 }, patient.sex);
  if (detail === 'core') {
    return;
  }
  const address = patient.address ?? {};
  expected.value({ segment: 'PID', field: 11, component: 1, subcomponent: 1 }, address.line1);
  [address.line2, address.city, address.state, address.postalCode, address.country].forEach((part, index) =>
    expected.value({ segment: 'PID', field: 11, component: index + 2 }, part),
  );
  if (patient.phone) {
    expected.value({ segment: 'PID', field: 13, component: 1, repetition: 0 }, patient.phone);
  }
  if (patient.email) {
    expected.value({ segment: 'PID', field: 13, component: 4, repetition: patient.phone ? 1 : 0 }, patient.email);
  }
  const codedFields: Array<[number, CodedValue | undefined]> = [
    [10, patient.race],
    [15, patient.language],
    [16, patient.maritalStatus],
    [22, patient.ethnicity],
  ];
  for (const [field, coded] of codedFields) {
    expected.coded('PID', pid, field, coded ?? { code: '' });
  }
  if (patient.primaryCareProvider) {
    expected.clinician('PD1', expected.segment('PD1'), 4, patient.primaryCareProvider);
  }
  for (const kin of patient.nextOfKin ?? []) {
    const nk1 = expected.segment('NK1');
    expected.value({ segment: 'NK1', occurrence: nk1, field: 1 }, String(nk1 + 1));
    expected.name('NK1', nk1, 2, kin.name);
    expected.coded('NK1', nk1, 3, kin.relationship ?? { code: '' });
    expected.value({ segment: 'NK1', occurrence: nk1, field: 5, component: 1 }, kin.phone);
  }
}

function expectVisit(expected: ExpectedMessage, encounter: Encounter, header: MessageHeaderContext): void {
  const pv1 = expected.segment('PV1');
  expected.value({ segment: 'PV1', occurrence: pv1, field: 2 }, encounter.patientClass);
  expected.value({ segment: 'PV1', occurrence: pv1, field: 3, component: 1 }, encounter.location);
  if (encounter.attending) {
    expected.clinician('PV1', pv1, 7, encounter.attending);
  }
  expected.value({ segment: 'PV1', occurrence: pv1, field: 19, component: 1 }, expectedShortId(encounter.encounterId, 15));
  expected.value({ segment: 'PV1', occurrence: pv1, field: 19, component: 4 }, namespaces(header).visit);
  expected.value({ segment: 'PV1', occurrence: pv1, field: 44 }, arb.expectedChartTimestamp(encounter.admitAt), 'timestamp');
  if (encounter.reason) {
    const pv2 = expected.segment('PV2');
    expected.value({ segment: 'PV2', occurrence: pv2, field: 3, component: 2 }, encounter.reason);
  }
}

/** OBX expectations; returns the OBX occurrence. */
function expectObservation(expected: ExpectedMessage, setId: number, valueType: string, identifier: CodedValue): number {
  const obx = expected.segment('OBX');
  expected.value({ segment: 'OBX', occurrence: obx, field: 1 }, String(setId));
  expected.value({ segment: 'OBX', occurrence: obx, field: 2 }, valueType);
  expected.coded('OBX', obx, 3, identifier);
  return obx;
}

function expectObservationRequest(expected: ExpectedMessage, setId: number, serviceCode: string): number {
  const obr = expected.segment('OBR');
  expected.value({ segment: 'OBR', occurrence: obr, field: 1 }, String(setId));
  expected.value({ segment: 'OBR', occurrence: obr, field: 4, component: 1 }, serviceCode);
  return obr;
}

function expectNoteGroup(expected: ExpectedMessage, setId: number, note: Note, header: MessageHeaderContext): void {
  const obr = expectObservationRequest(expected, setId, 'NOTE');
  expected.value({ segment: 'OBR', occurrence: obr, field: 3, component: 1 }, expectedShortId(note.noteId, documentNumberLength(header)));
  expected.value({ segment: 'OBR', occurrence: obr, field: 25 }, 'F');
  const obx = expectObservation(expected, 1, 'TX', { code: 'NOTE', display: 'ChartNote', system: 'L' });
  expected.value({ segment: 'OBX', occurrence: obx, field: 5 }, note.text, 'lines');
  expected.clinician('OBX', obx, 16, note.author);
}

function expectItemValue(expected: ExpectedMessage, obx: number, item: AssessmentItem): string {
  const at = (component?: number): ValueAddress => ({ segment: 'OBX', occurrence: obx, field: 5, component });
  const { value } = item;
  if (typeof value === 'object') {
    expected.coded('OBX', obx, 5, value);
    return 'CE';
  }
  const text = String(value);
  if (item.kind === 'coded') {
    expected.value(at(1), text);
    return 'CE';
  }
  if (item.kind === 'numeric' && NM.test(text)) {
    expected.value(at(), text);
    return 'NM';
  }
  const { type, kind } = textKind(text);
  expected.value(at(), text, kind);
  return type;
}

function expectAssessmentGroup(expected: ExpectedMessage, setId: number, assessment: Assessment): void {
  const obr = expectObservationRequest(expected, setId, assessment.code.code);
  expected.coded('OBR', obr, 4, assessment.code);
  expected.value({ segment: 'OBR', occurrence: obr, field: 3, component: 1 }, expectedShortId(assessment.assessmentId, 22));
  let observation = 0;
  for (const item of assessment.items) {
    observation += 1;
    const obx = expected.segment('OBX');
    expected.value({ segment: 'OBX', occurrence: obx, field: 1 }, String(observation));
    expected.coded('OBX', obx, 3, item.code);
    expected.value({ segment: 'OBX', occurrence: obx, field: 2 }, expectItemValue(expected, obx, item));
    expected.value({ segment: 'OBX', occurrence: obx, field: 6, component: 1 }, item.units);
    expected.value({ segment: 'OBX', occurrence: obx, field: 11 }, 'F');
    expected.value({ segment: 'OBX', occurrence: obx, field: 14 }, arb.expectedChartTimestamp(assessment.performedAt), 'timestamp');
    if (assessment.performer) {
      expected.clinician('OBX', obx, 16, assessment.performer);
    }
  }
  if (assessment.total !== undefined) {
    observation += 1;
    const total = String(assessment.total);
    const obx = expectObservation(expected, observation, NM.test(total) ? 'NM' : 'ST', { code: 'TOTAL', display: 'Total score', system: 'L' });
    expected.value({ segment: 'OBX', occurrence: obx, field: 5 }, total);
  }
  if (assessment.interpretation) {
    observation += 1;
    const { type, kind } = textKind(assessment.interpretation);
    const obx = expectObservation(expected, observation, type, { code: 'INTERPRETATION', display: 'Interpretation', system: 'L' });
    expected.value({ segment: 'OBX', occurrence: obx, field: 5 }, assessment.interpretation, kind);
  }
}

/** The encounter group of the patient summary (visit details and orders as observations). */
function expectEncounterSummaryGroup(expected: ExpectedMessage, setId: number, encounter: Encounter): void {
  const obr = expectObservationRequest(expected, setId, 'ENCOUNTER');
  // the visit number, as PV1-19 writes it (issue 27 item 5: one external id per encounter)
  expected.value({ segment: 'OBR', occurrence: obr, field: 3, component: 1 }, expectedShortId(encounter.encounterId, 15));
  let observation = 1;
  const classObx = expectObservation(expected, observation, 'CE', { code: 'PATIENT_CLASS', display: 'Patient class', system: 'L' });
  expected.value({ segment: 'OBX', occurrence: classObx, field: 5, component: 1 }, encounter.patientClass);
  if (encounter.location) {
    const { type, kind } = textKind(encounter.location);
    const obx = expectObservation(expected, ++observation, type, { code: 'LOCATION', display: 'Location', system: 'L' });
    expected.value({ segment: 'OBX', occurrence: obx, field: 5 }, encounter.location, kind);
  }
  if (encounter.attending) {
    const obx = expectObservation(expected, ++observation, 'XCN', { code: 'ATTENDING', display: 'Attending doctor', system: 'L' });
    expected.clinician('OBX', obx, 5, encounter.attending);
  }
  if (encounter.reason) {
    const { type, kind } = textKind(encounter.reason);
    const obx = expectObservation(expected, ++observation, type, { code: 'ADMIT_REASON', display: 'Admit reason', system: 'L' });
    expected.value({ segment: 'OBX', occurrence: obx, field: 5 }, encounter.reason, kind);
  }
  (encounter.diagnoses ?? []).forEach((diagnosis, index) => {
    const obx = expectObservation(expected, ++observation, 'CE', { code: 'DIAGNOSIS', display: 'Diagnosis', system: 'L' });
    expected.value({ segment: 'OBX', occurrence: obx, field: 4 }, String(index + 1));
    expected.coded('OBX', obx, 5, diagnosis);
  });
}

/** One ORC-1 SC group per order (no results in the chart); returns the next OBR set id. */
function expectPendingOrderGroups(expected: ExpectedMessage, firstSetId: number, encounter: Encounter): number {
  let setId = firstSetId;
  for (const order of encounter.orders ?? []) {
    const orc = expected.segment('ORC');
    expected.value({ segment: 'ORC', occurrence: orc, field: 1 }, 'SC');
    expected.value({ segment: 'ORC', occurrence: orc, field: 2, component: 1 }, expectedShortId(order.orderId, 22));
    if (order.orderingProvider) {
      expected.clinician('ORC', orc, 12, order.orderingProvider);
    }
    const orderObr = expectObservationRequest(expected, setId, order.code.code);
    expected.coded('OBR', orderObr, 4, order.code);
    expected.value({ segment: 'OBR', occurrence: orderObr, field: 2, component: 1 }, expectedShortId(order.orderId, 22));
    expected.value({ segment: 'OBR', occurrence: orderObr, field: 7 }, arb.expectedChartTimestamp(order.orderedAt ?? encounter.admitAt), 'timestamp');
    setId += 1;
  }
  return setId;
}

const LAB_STATUS = { preliminary: 'P', final: 'F', corrected: 'C', amended: 'C', cancelled: 'X' } as const;

const COMPARATOR = /^\s*(<=|>=|<>|<|>|=)\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*$/;
const RATIO = /^\s*(\d+(?:\.\d*)?)\s*([:/])\s*(\d+(?:\.\d*)?)\s*$/;

function expectedLabCode(result: LabResultSummary['results'][number]): CodedValue {
  if (result.code !== undefined && result.code.trim() !== '') {
    return { code: result.code.trim(), display: result.testName, system: result.codeSystem?.trim() || 'L' };
  }
  const local = result.testName
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return { code: expectedShortId(local || result.testName || 'TEST', 20, false)!, display: result.testName, system: 'L' };
}

function isCommentRow(result: LabResultSummary['results'][number]): boolean {
  return !(result.code !== undefined && result.code.trim() !== '') && /\b(?:comments?|notes?|remarks?)\s*$/i.test(result.testName) && !NM.test(result.result);
}

function expectLabGroup(expected: ExpectedMessage, setId: number, lab: LabResultSummary): void {
  const obr = expectObservationRequest(expected, setId, 'LAB');
  expected.value({ segment: 'OBR', occurrence: obr, field: 2, component: 1 }, expectedShortId(lab.resultId, 22));
  expected.value({ segment: 'OBR', occurrence: obr, field: 3, component: 1 }, expectedShortId(lab.accessionNumber, 22));
  // a lab's resulted at as sent: its fraction kept (DTM: at most 4 digits)
  const fraction = /\.(\d+)Z$/.exec(lab.resultedAt)?.[1];
  const resultedAt = arb.expectedTimestamp(lab.resultedAt).replace('+0000', fraction ? `.${fraction.slice(0, 4)}+0000` : '+0000');
  expected.value({ segment: 'OBR', occurrence: obr, field: 7 }, resultedAt, 'timestamp');
  expected.value({ segment: 'OBR', occurrence: obr, field: 25 }, LAB_STATUS[lab.status]);
  lab.results.filter(isCommentRow).forEach((result, index) => {
    const nte = expected.segment('NTE');
    expected.value({ segment: 'NTE', occurrence: nte, field: 1 }, String(index + 1));
    expected.value({ segment: 'NTE', occurrence: nte, field: 3 }, `${result.testName}: ${result.result}`, 'formatted');
  });
  lab.results
    .filter((result) => !isCommentRow(result))
    .forEach((result, index) => {
      if (lab.status === 'cancelled') {
        // issue 27: a cancelled observation (OBX-11 X, result cannot be obtained) carries no value
        const obx = expectObservation(expected, index + 1, 'ST', expectedLabCode(result));
        expected.value({ segment: 'OBX', occurrence: obx, field: 5 }, '');
        expected.value({ segment: 'OBX', occurrence: obx, field: 6, component: 1 }, result.units);
        expected.value({ segment: 'OBX', occurrence: obx, field: 7 }, result.referenceRange);
        expected.value({ segment: 'OBX', occurrence: obx, field: 11 }, 'X');
        return;
      }
      const comparator = COMPARATOR.exec(result.result);
      const ratio = RATIO.exec(result.result);
      const type = NM.test(result.result) ? 'NM' : comparator || ratio ? 'SN' : textKind(result.result).type;
      const obx = expectObservation(expected, index + 1, type, expectedLabCode(result));
      const at = (component?: number): ValueAddress => ({ segment: 'OBX', occurrence: obx, field: 5, component });
      if (type === 'NM') expected.value(at(), result.result);
      else if (comparator) {
        expected.value(at(1), comparator[1]);
        expected.value(at(2), comparator[2]);
      } else if (ratio) {
        expected.value(at(2), ratio[1]);
        expected.value(at(3), ratio[2]);
        expected.value(at(4), ratio[3]);
      } else expected.value(at(), result.result, textKind(result.result).kind);
      expected.value({ segment: 'OBX', occurrence: obx, field: 6, component: 1 }, result.units);
      expected.value({ segment: 'OBX', occurrence: obx, field: 7 }, result.referenceRange);
      expected.value({ segment: 'OBX', occurrence: obx, field: 11 }, LAB_STATUS[lab.status]);
    });
}

function withPatient<T extends { patientId: string }>(record: T, patient: Patient): T {
  return { ...record, patientId: patient.patientId };
}

describe('property: hostile text round-trips through every builder', () => {
  test('encodeNoteMessage', () => {
    fc.assert(
      fc.property(arb.header, arb.patient, arb.optional(arb.encounter), arb.note, (header, patient, encounterOrNone, rawNote) => {
        const encounter = encounterOrNone && withPatient(encounterOrNone, patient);
        const note = { ...withPatient(rawNote, patient), encounterId: encounter?.encounterId };
        const message = encodeNoteMessage({ header, patient, encounter, note });

        const expected = new ExpectedMessage();
        expectHeader(expected, header, 'T02', 'MDM_T02');
        expected.segment('EVN');
        expectPatient(expected, patient, 'core');
        const pv1 = expected.segment('PV1');
        expected.value({ segment: 'PV1', field: 2 }, encounter?.patientClass ?? 'N');
        expected.value({ segment: 'PV1', field: 3, component: 1 }, encounter?.location);
        expected.clinician('PV1', pv1, 7, encounter?.attending ?? note.author);
        expected.value({ segment: 'PV1', field: 19, component: 1 }, encounter ? expectedShortId(encounter.encounterId, 15) : '');
        const txa = expected.segment('TXA');
        expected.clinician('TXA', txa, 5, note.author);
        expected.clinician('TXA', txa, 9, note.author);
        expected.clinician('TXA', txa, 22, note.author);
        expected.value({ segment: 'TXA', field: 22, component: 15 }, arb.expectedChartTimestamp(note.createdAt), 'timestamp');
        expected.value({ segment: 'TXA', field: 4 }, arb.expectedChartTimestamp(note.createdAt), 'timestamp');
        expected.value({ segment: 'TXA', field: 12, component: 1 }, expectedShortId(note.noteId, documentNumberLength(header)));
        expected.value({ segment: 'TXA', field: 12, component: 2 }, note.noteId.trim() === '' ? '' : namespaces(header).entity);
        expected.segment('OBX');
        expected.value({ segment: 'OBX', field: 5 }, note.text, 'lines');
        checkMessage(message, 'MDM_T02', expected);
      }),
      { seed: 2510201, numRuns: RUNS },
    );
  });

  test('encodePatientAdtMessage', () => {
    fc.assert(
      fc.property(arb.header, arb.patient, (header, patient) => {
        const message = encodePatientAdtMessage({ header, patient });
        const expected = new ExpectedMessage();
        expectHeader(expected, header, 'A08', 'ADT_A01');
        expected.segment('EVN');
        expectPatient(expected, patient, 'full');
        expected.segment('PV1');
        expected.value({ segment: 'PV1', field: 2 }, 'N');
        checkMessage(message, 'ADT_A01', expected);
      }),
      { seed: 2510202, numRuns: RUNS },
    );
  });

  test('encodeEncounterMessage, style adt (ADT^A08: PV1, PV2, DG1)', () => {
    fc.assert(
      fc.property(arb.header, arb.patient, arb.encounter, (header, patient, rawEncounter) => {
        const encounter = withPatient(rawEncounter, patient);
        const message = encodeEncounterMessage({ header, patient, encounter });
        const expected = new ExpectedMessage();
        expectHeader(expected, header, 'A08', 'ADT_A01');
        expected.segment('EVN');
        expectPatient(expected, patient, 'full');
        // the ADT encounter carries PID only (no PD1 / NK1)
        expected.segmentNames.splice(expected.segmentNames.indexOf('PID') + 1);
        expected.values.splice(0, expected.values.length, ...expected.values.filter((value) => value.at.segment !== 'PD1' && value.at.segment !== 'NK1'));
        expectVisit(expected, encounter, header);
        (encounter.diagnoses ?? []).forEach((diagnosis, index) => {
          const dg1 = expected.segment('DG1');
          expected.value({ segment: 'DG1', occurrence: dg1, field: 1 }, String(index + 1));
          expected.coded('DG1', dg1, 3, diagnosis);
          expected.value({ segment: 'DG1', occurrence: dg1, field: 6 }, encounter.dischargeAt ? 'F' : 'W');
        });
        checkMessage(message, 'ADT_A01', expected);
      }),
      { seed: 2510203, numRuns: RUNS },
    );
  });

  test('encodeEncounterMessage, style oru (ORU^R01, orders as ORC-1 SC groups)', () => {
    fc.assert(
      fc.property(arb.header, arb.patient, arb.encounter, (header, patient, rawEncounter) => {
        const encounter = withPatient(rawEncounter, patient);
        const message = encodeEncounterMessage({ header, patient, encounter, style: 'oru' });
        const expected = new ExpectedMessage();
        expectHeader(expected, header, 'R01', 'ORU_R01');
        expectPatient(expected, patient, 'core');
        expectVisit(expected, encounter, header);
        const obr = expectObservationRequest(expected, 1, 'ENCOUNTER');
        const status = encounter.dischargeAt ? 'F' : 'P';
        // the visit number, as PV1-19 writes it (issue 27 item 5: one external id per encounter)
        expected.value({ segment: 'OBR', occurrence: obr, field: 3, component: 1 }, expectedShortId(encounter.encounterId, 15));
        expected.value({ segment: 'OBR', occurrence: obr, field: 7 }, arb.expectedChartTimestamp(encounter.admitAt), 'timestamp');
        expected.value({ segment: 'OBR', occurrence: obr, field: 25 }, status);
        (encounter.diagnoses ?? []).forEach((diagnosis, index) => {
          const obx = expectObservation(expected, index + 1, 'CE', { code: 'DIAGNOSIS', display: 'Diagnosis', system: 'L' });
          expected.coded('OBX', obx, 5, diagnosis);
          expected.value({ segment: 'OBX', occurrence: obx, field: 11 }, status);
        });
        expectPendingOrderGroups(expected, 2, encounter);
        checkMessage(message, 'ORU_R01', expected);
      }),
      { seed: 2510206, numRuns: RUNS },
    );
  });

  test('encodeAssessmentMessage', () => {
    fc.assert(
      fc.property(arb.header, arb.patient, arb.optional(arb.encounter), arb.assessment, (header, patient, encounterOrNone, rawAssessment) => {
        const encounter = encounterOrNone && withPatient(encounterOrNone, patient);
        const assessment = { ...withPatient(rawAssessment, patient), encounterId: encounter?.encounterId };
        const message = encodeAssessmentMessage({ header, patient, encounter, assessment });
        const expected = new ExpectedMessage();
        expectHeader(expected, header, 'R01', 'ORU_R01');
        expectPatient(expected, patient, 'core');
        if (encounter) {
          expectVisit(expected, encounter, header);
        }
        expectAssessmentGroup(expected, 1, assessment);
        checkMessage(message, 'ORU_R01', expected);
      }),
      { seed: 2510204, numRuns: RUNS },
    );
  });

  const chartRecord: fc.Arbitrary<ChartRecord> = fc.oneof(
    arb.encounter.map((record): ChartRecord => ({ kind: 'encounter', at: record.admitAt, record })),
    arb.note.map((record): ChartRecord => ({ kind: 'note', at: record.createdAt, record })),
    arb.assessment.map((record): ChartRecord => ({ kind: 'assessment', at: record.performedAt, record })),
  );

  test('encodePatientSummaryMessage', () => {
    fc.assert(
      fc.property(
        arb.header,
        arb.patient,
        fc.array(chartRecord, { maxLength: 4 }),
        arb.optional(fc.array(arb.labResult, { maxLength: 2 })),
        (header, patient, records, labResults) => {
          const message = encodePatientSummaryMessage({ header, patient, records, labResults });
          const expected = new ExpectedMessage();
          expectHeader(expected, header, 'R01', 'ORU_R01');
          expectPatient(expected, patient, 'full');
          // Both lists are newest first; a lab result goes before the next record only when strictly newer.
          const remainingLabs = [...(labResults ?? [])];
          const groups: Array<ChartRecord | LabResultSummary> = [];
          for (const record of records) {
            while (remainingLabs[0] && new Date(remainingLabs[0].resultedAt) > new Date(record.at)) {
              groups.push(remainingLabs.shift() as LabResultSummary);
            }
            groups.push(record);
          }
          groups.push(...remainingLabs);
          let setId = 0;
          for (const group of groups) {
            setId += 1;
            if (!('kind' in group)) expectLabGroup(expected, setId, group);
            else if (group.kind === 'note') expectNoteGroup(expected, setId, group.record, header);
            else if (group.kind === 'assessment') expectAssessmentGroup(expected, setId, group.record);
            else {
              expectEncounterSummaryGroup(expected, setId, group.record);
              setId = expectPendingOrderGroups(expected, setId + 1, group.record) - 1;
            }
          }
          if (setId === 0) {
            expectObservationRequest(expected, 1, 'NO_RECORDS');
            expected.segment('NTE');
          }
          checkMessage(message, 'ORU_R01', expected);
        },
      ),
      { seed: 2510205, numRuns: RUNS },
    );
  });
});
