/**
 * What each supported HL7 message does to the service's data:
 *
 *   ORU^R01                    each OBR with its OBX -> one lab result through receiveLabResult (the code path
 *                              of POST /receiveTestData: validation, encryption, versions, current pointer,
 *                              notification)
 *   ADT^A01/A04/A08/A28/A31    PID (+PD1, NK1) upserted as the chart patient; MRN index and match index updated
 *   ADT^A40                    recorded and held for review (never applied)
 *   MDM^T02                    TXA + OBX text stored as a chart note of the patient
 *
 * A handler answers AA, or throws {@link AckRejection} (AE/AR with ERR entries) before writing anything.
 * Error texts name the rule and the location, never a submitted value.
 */
import type { AckError } from '../hl7/ack';
import { ErrorCodes, type ErrorCode, type ErrorLocation } from '../hl7/parse-error';
import { firstSegment, repetitionsOf, valueAt, type ParsedMessage, type ParsedSegment } from '../hl7/parser';
import type { Note, Patient } from '../chart/types';
import { ValidationFailedError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { receiveLabResult, senderAllowed, type ReceiveDependencies } from '../results/receive';
import { normalizeStatus } from '../results/status';
import { acceptLabResult } from '../results/validation';
import type { ResultKeys } from '../results/lookup-keys';
import { address, clinician, codedValue, compact, dateFromDt, instantFromTs, personName, present, telecoms } from './hl7-values';

export class AckRejection extends Error {
  constructor(
    readonly code: 'AE' | 'AR',
    readonly errors: AckError[],
  ) {
    super(errors[0]?.message ?? 'rejected');
    this.name = 'AckRejection';
  }
}

export function reject(code: 'AE' | 'AR', errorCode: ErrorCode, message: string, location?: ErrorLocation): never {
  throw new AckRejection(code, [{ code: errorCode, message, location }]);
}

export interface IntakeAudit {
  action: string;
  patientId?: string;
  resourceIds?: Record<string, string>;
}

export interface HandledMessage {
  audit: IntakeAudit;
}

export interface ChartAccess {
  getPatient(patientId: string): Promise<Patient | undefined>;
  /** the chart-patient writer: chart item + match index (TODO(forms): the forms helper's writer replaces this) */
  writePatient(patient: Patient, now: Date): Promise<void>;
  putNote(note: Note): Promise<void>;
}

export interface MergeReviews {
  hold(request: {
    reviewId: string;
    survivingPatientId: string;
    priorPatientId?: string;
    priorIdentifierKey: string;
    partnerId: string;
    receivedAt: Date;
  }): Promise<boolean>;
}

export interface HandlerDependencies {
  keys(): Promise<ResultKeys>;
  mrnIndex: { find(identifierKey: string): Promise<string | undefined>; claim(identifierKey: string, patientId: string, now: Date): Promise<string> };
  chart: ChartAccess;
  labResults: ReceiveDependencies;
  merges: MergeReviews;
}

export interface HandlerContext {
  principal: Principal;
  requestId: string;
  now: Date;
  /** MSH-3 the service writes in its own exports (its summary's chart-record groups are not lab results) */
  ownApplication: string;
}

export const SUPPORTED_EVENTS: Readonly<Record<string, readonly string[]>> = {
  ORU: ['R01'],
  ADT: ['A01', 'A04', 'A08', 'A28', 'A31', 'A40'],
  MDM: ['T02'],
};

export async function handleMessage(message: ParsedMessage, services: HandlerDependencies, context: HandlerContext): Promise<HandledMessage> {
  const msh = message.segments[0]!;
  const code = valueAt(msh, 9, 1);
  const event = valueAt(msh, 9, 2) || valueAt(firstSegment(message, 'EVN'), 1);
  if (code === 'ORU' && event === 'R01') return handleOru(message, services, context);
  if (code === 'ADT' && event === 'A40') return handleMerge(message, services, context);
  if (code === 'ADT' && SUPPORTED_EVENTS.ADT!.includes(event)) return handleAdt(message, services, context);
  if (code === 'MDM' && event === 'T02') return handleMdm(message, services, context);
  return reject('AR', ErrorCodes.unsupportedMessageType, 'unsupported message type: this endpoint takes ORU^R01, ADT^A01/A04/A08/A28/A31/A40 and MDM^T02', {
    segmentId: 'MSH',
    segmentSequence: 1,
    field: 9,
  });
}

// ---- patient identity ----

interface PatientIdentifier {
  mrn: string;
  authority: string;
}

function patientIdentifier(pid: ParsedSegment | undefined): PatientIdentifier {
  const location = { segmentId: 'PID', segmentSequence: pid?.sequence ?? 1, field: 3 };
  if (!pid) reject('AE', ErrorCodes.segmentSequence, 'the message has no PID segment', { segmentId: 'PID' });
  // PID-3 (v2.3+); PID-2 and PID-4 only as fallbacks for senders that still fill the old external/alternate ids
  const reps = [3, 2, 4].map((field) => repetitionsOf(pid, field).filter((rep) => present(rep[0]?.[0]))).find((found) => found.length > 0) ?? [];
  const chosen = reps.find((rep) => rep[4]?.[0] === 'MR') ?? reps[0];
  const mrn = present(chosen?.[0]?.[0]);
  if (!mrn) reject('AE', ErrorCodes.requiredFieldMissing, 'PID-3 must carry the patient identifier (CX-1)', location);
  const authority = present(chosen?.[3]?.[0]) ?? '';
  if (mrn.length > 128 || authority.length > 128)
    reject('AE', ErrorCodes.valueTooLong, 'PID-3 identifier or assigning authority is longer than 128 characters', location);
  return { mrn, authority };
}

/** `hl7-` + 128 bits of the keyed identifier hash: the id of a chart patient first seen in an HL7 message. */
export function patientIdFor(identifierKey: string): string {
  return `hl7-${identifierKey.slice(0, 32)}`;
}

// ---- ORU^R01 ----

const CHART_RECORD_GROUPS = new Set(['NOTE', 'ENCOUNTER', 'NO_RECORDS']);

interface ObservationGroup {
  pid: ParsedSegment | undefined;
  obr: ParsedSegment;
  obx: ParsedSegment[];
  /** NTE segments of the group, each with the OBX it follows (undefined: it follows the OBR) */
  notes: Array<{ nte: ParsedSegment; obx?: ParsedSegment }>;
}

function observationGroups(message: ParsedMessage): ObservationGroup[] {
  const groups: ObservationGroup[] = [];
  let pid: ParsedSegment | undefined;
  let current: ObservationGroup | undefined;
  for (const segment of message.segments) {
    if (segment.name === 'PID') {
      pid = segment;
      current = undefined;
    } else if (segment.name === 'OBR') {
      current = { pid, obr: segment, obx: [], notes: [] };
      groups.push(current);
    } else if (segment.name === 'OBX' && current) {
      current.obx.push(segment);
    } else if (segment.name === 'NTE' && current) {
      current.notes.push({ nte: segment, obx: current.obx[current.obx.length - 1] });
    }
  }
  return groups;
}

function obxText(obx: ParsedSegment): string {
  const type = valueAt(obx, 2).toUpperCase();
  const reps = obx.fields[5] ?? [];
  const joinComponents = (rep: string[][]) => rep.map((c) => c.join('&')).join('^');
  switch (type) {
    case 'TX':
    case 'FT':
      return reps.map((rep) => rep.map((c) => c.join('')).join('')).join('\n');
    case 'CE':
    case 'CWE':
    case 'CNE':
      return reps.map((rep) => present(rep[1]?.[0]) ?? rep[0]?.[0] ?? '').join(', ');
    case 'SN':
      return reps.map((rep) => rep.map((c) => c[0] ?? '').join('')).join(', ');
    case 'NM':
    case 'ST':
    case 'DT':
    case 'TM':
    case 'TS':
    case 'DTM':
    case 'ID':
    case 'IS':
      return reps.map((rep) => rep[0]?.[0] ?? '').join(', ');
    default:
      return reps.map(joinComponents).join('~');
  }
}

/** A comment row's name as the exports write it (`Comment: text`): a name ending in comment, note or remark. */
const COMMENT_PREFIX = /^([^:\n]{1,80}\b(?:comments?|notes?|remarks?)):\s?/i;

/**
 * NTE comments as comment rows of the lab result (the exports write a comment row as `Name: text` in an
 * NTE after the OBR): `Name: text` gives testName `Name`; any other NTE-3 gives `Comment` (after the
 * OBR) or `<observation name> comment` (after an OBX). The repetitions of NTE-3 are lines.
 */
function commentRows(group: ObservationGroup): Record<string, unknown>[] {
  const rows: Record<string, unknown>[] = [];
  for (const { nte, obx } of group.notes) {
    const text = repetitionsOf(nte, 3)
      .map((rep) => rep.map((c) => c.join('')).join(''))
      .join('\n');
    if (text.trim() === '') continue;
    const named = COMMENT_PREFIX.exec(text);
    if (named && !obx) rows.push({ testName: named[1], result: text.slice(named[0].length) });
    else rows.push({ testName: obx ? `${obxName(obx)} comment` : 'Comment', result: text });
  }
  return rows;
}

const RESULT_CODE = /^[!-~]([ -~]*[!-~])?$/;
const CODE_SYSTEM = /^[A-Za-z0-9][A-Za-z0-9.-]*$/;

/** `code` and `codeSystem` of a lab test from OBX-3.1 and OBX-3.3, each kept only when the lab schema accepts it. */
function codedTest(code: string, system: string): { code?: string; codeSystem?: string } {
  if (!(code.length <= 64 && RESULT_CODE.test(code))) return {};
  return system.length <= 20 && CODE_SYSTEM.test(system) ? { code, codeSystem: system } : { code };
}

function obxName(obx: ParsedSegment): string {
  return present(valueAt(obx, 3, 2)) ?? present(valueAt(obx, 3, 1)) ?? `Observation ${valueAt(obx, 1) || obx.sequence}`;
}

function labBody(group: ObservationGroup, sender: string, patientId: string, message: ParsedMessage) {
  const obrLocation = (field: number): ErrorLocation => ({ segmentId: 'OBR', segmentSequence: group.obr.sequence, field });
  const accession = present(valueAt(group.obr, 3)) ?? present(valueAt(group.obr, 2));
  if (!accession) reject('AE', ErrorCodes.requiredFieldMissing, 'OBR-3 (or OBR-2) must carry the accession number', obrLocation(3));
  const statusText = present(valueAt(group.obr, 25)) ?? present(valueAt(group.obx[0], 11));
  if (!statusText) reject('AE', ErrorCodes.requiredFieldMissing, 'OBR-25 result status is required (table 0123: P, F, C, X)', obrLocation(25));
  const status = normalizeStatus(statusText);
  if (!status || statusText.length > 1) reject('AE', ErrorCodes.tableValueNotFound, 'OBR-25 result status must be P, F, C or X (table 0123)', obrLocation(25));
  // results reported at (OBR-22), else observed at (OBR-7), else the first OBX-14, else the message time
  const timeCandidates = [valueAt(group.obr, 22), valueAt(group.obr, 7), valueAt(group.obx[0], 14), valueAt(message.segments[0], 7)].filter((t) => present(t));
  const resultedAt = timeCandidates.map(instantFromTs).find((t) => t !== undefined);
  if (!resultedAt) reject('AE', ErrorCodes.dataType, 'OBR-22 / OBR-7 must be a valid HL7 date-time', obrLocation(present(valueAt(group.obr, 22)) ? 22 : 7));

  const results: Record<string, unknown>[] = [];
  const reports: Record<string, unknown>[] = [];
  for (const obx of group.obx) {
    const type = valueAt(obx, 2).toUpperCase();
    const testName = obxName(obx);
    const extras = compact({
      valueType: present(type),
      // OBX-3 as the lab result's code and coding system (table 0396 name), when they are well formed:
      // the exports write them back in OBX-3 (a LOINC code stays LOINC through the round trip)
      ...codedTest(valueAt(obx, 3, 1), valueAt(obx, 3, 3)),
      abnormalFlags: present(
        repetitionsOf(obx, 8)
          .map((rep) => rep[0]?.[0] ?? '')
          .filter(Boolean)
          .join(','),
      ),
      observationStatus: present(valueAt(obx, 11)),
    });
    if (type === 'ED') {
      const encoding = valueAt(obx, 5, 4).toLowerCase();
      const data = valueAt(obx, 5, 5);
      if (!data) {
        // an ED placeholder without data: recorded as an observation without a document
        results.push({ testName, result: '', ...extras });
        continue;
      }
      const mime = [valueAt(obx, 5, 2), valueAt(obx, 5, 3)].filter(Boolean).join('/') || 'application/octet-stream';
      reports.push({ source: encoding === 'base64' ? 'base64' : encoding || 'text', type: mime.slice(0, 64), name: testName.slice(0, 255), data });
      results.push({ testName, result: '', ...extras });
      continue;
    }
    if (type === 'RP') {
      const pointer = valueAt(obx, 5, 1);
      if (pointer)
        reports.push({
          source: 'reference',
          type: ([valueAt(obx, 5, 3), valueAt(obx, 5, 4)].filter(Boolean).join('/') || 'reference').slice(0, 64),
          name: testName.slice(0, 255),
          data: pointer,
        });
      results.push({ testName, result: '', ...extras });
      continue;
    }
    results.push(
      compact({
        testName,
        result: obxText(obx),
        units: present(valueAt(obx, 6, 1)) ?? present(valueAt(obx, 6, 2)),
        referenceRange: present(valueAt(obx, 7)),
        ...extras,
      }),
    );
  }
  results.push(...commentRows(group));
  return {
    data: compact({
      senderID: sender,
      patientID: patientId,
      accessionNumber: accession,
      status: statusText,
      ResultedDateUTC: resultedAt,
      results,
      reports: reports.length > 0 ? reports : undefined,
    }),
  };
}

/** A validation failure of the lab result, located in the message (pointer -> segment/field). */
function locate(pointer: string, group: ObservationGroup): ErrorLocation {
  const obr = (field: number): ErrorLocation => ({ segmentId: 'OBR', segmentSequence: group.obr.sequence, field });
  if (pointer.startsWith('/data/status')) return obr(25);
  if (pointer.startsWith('/data/ResultedDateUTC')) return obr(22);
  if (pointer.startsWith('/data/accessionNumber')) return obr(3);
  if (pointer.startsWith('/data/patientID')) return { segmentId: 'PID', segmentSequence: group.pid?.sequence ?? 1, field: 3 };
  if (pointer.startsWith('/data/senderID')) return { segmentId: 'MSH', segmentSequence: 1, field: 4 };
  const item = /^\/data\/(results|reports)\/(\d+)(?:\/(\w+))?/.exec(pointer);
  if (item) {
    const obx = group.obx[Number(item[2])];
    const field = item[3] === 'testName' ? 3 : item[3] === 'units' ? 6 : item[3] === 'referenceRange' ? 7 : 5;
    return { segmentId: 'OBX', segmentSequence: obx?.sequence ?? 1, field };
  }
  return obr(1);
}

async function handleOru(message: ParsedMessage, services: HandlerDependencies, context: HandlerContext): Promise<HandledMessage> {
  const msh = message.segments[0]!;
  const sender = valueAt(msh, 4);
  const ownExport = valueAt(msh, 3) === context.ownApplication;
  const groups = observationGroups(message).filter((group) => {
    if (group.obx.length === 0) return false; // an order without observations is no result
    const serviceCode = valueAt(group.obr, 4, 1);
    if (valueAt(group.obr, 4, 3) === 'L' && CHART_RECORD_GROUPS.has(serviceCode)) return false;
    // the service's own summary carries chart records (assessments...) as groups; only its LAB groups are lab results
    return !(ownExport && serviceCode !== 'LAB');
  });
  if (groups.length === 0) reject('AE', ErrorCodes.segmentSequence, 'the message holds no OBR with OBX observations', { segmentId: 'OBR' });
  const keys = await services.keys();
  const bodies: Array<{ group: ObservationGroup; body: unknown }> = [];
  const identifiers = new Map<ParsedSegment | undefined, string>();
  for (const group of groups) {
    let patientId = identifiers.get(group.pid);
    if (!patientId) {
      const identifier = patientIdentifier(group.pid);
      const identifierKey = keys.patientIdentifierKey(identifier.authority, identifier.mrn);
      patientId = (await services.mrnIndex.find(identifierKey)) ?? patientIdFor(identifierKey);
      identifiers.set(group.pid, patientId);
    }
    const body = labBody(group, sender, patientId, message);
    try {
      acceptLabResult(body, context.now);
    } catch (error) {
      if (!(error instanceof ValidationFailedError)) throw error;
      const errors = error.errors.slice(0, 20).map((fieldError) => {
        const pointer = 'pointer' in fieldError ? fieldError.pointer : '';
        return {
          code: pointer.startsWith('/data/status') ? ErrorCodes.tableValueNotFound : ErrorCodes.dataType,
          message: `${pointer.replace('/data/', '')}: ${fieldError.message}`.slice(0, 200),
          location: locate(pointer, group),
        };
      });
      throw new AckRejection(
        'AE',
        errors.length > 0 ? errors : [{ code: ErrorCodes.dataType, message: 'the lab result failed validation', location: locate('', group) }],
      );
    }
    bodies.push({ group, body });
  }
  const resultIds: string[] = [];
  let patientId: string | undefined;
  for (const { body } of bodies) {
    const outcome = await receiveLabResult(
      { body, principal: context.principal, requestId: context.requestId, requestIdSupplied: false, now: context.now },
      services.labResults,
    );
    resultIds.push(outcome.body.resultId);
    // the chart patient (found by PID-3) names the record in the audit trail; an unknown MRN's keyed id does not
    patientId ??= outcome.chartPatientId;
  }
  return {
    audit: {
      action: 'hl7.oru.results_store',
      ...(patientId ? { patientId } : {}),
      resourceIds: { resultIds: resultIds.join(','), count: String(resultIds.length) },
    },
  };
}

// ---- ADT ----

function patientFrom(message: ParsedMessage, base: Patient): Patient {
  const pid = firstSegment(message, 'PID');
  const pd1 = firstSegment(message, 'PD1');
  const name = personName(pid?.fields[5]?.[0]);
  const birthDate = dateFromDt(valueAt(pid, 7));
  const sexText = valueAt(pid, 8);
  const sex = ['A', 'F', 'M', 'N', 'O', 'U'].includes(sexText) ? (sexText as Patient['sex']) : undefined;
  const { phone, email } = telecoms(pid, 13);
  const nextOfKin = message.segments
    .filter((segment) => segment.name === 'NK1')
    .map((nk1) => {
      const kinName = personName(nk1.fields[2]?.[0]);
      if (!kinName) return undefined;
      return compact({ name: kinName, relationship: codedValue(nk1.fields[3]?.[0]), phone: telecoms(nk1, 5).phone });
    })
    .filter((kin): kin is NonNullable<typeof kin> => kin !== undefined);
  return compact({
    ...base,
    name: name ?? base.name,
    birthDate: birthDate ?? base.birthDate,
    sex: sex ?? base.sex,
    address: address(pid?.fields[11]?.[0]) ?? base.address,
    phone: phone ?? base.phone,
    email: email ?? base.email,
    race: codedValue(pid?.fields[10]?.[0]) ?? base.race,
    language: codedValue(pid?.fields[15]?.[0]) ?? base.language,
    maritalStatus: codedValue(pid?.fields[16]?.[0]) ?? base.maritalStatus,
    ethnicity: codedValue(pid?.fields[22]?.[0]) ?? base.ethnicity,
    primaryCareProvider: clinician(pd1?.fields[4]?.[0]) ?? base.primaryCareProvider,
    nextOfKin: nextOfKin.length > 0 ? nextOfKin : base.nextOfKin,
  });
}

function checkSender(message: ParsedMessage, context: HandlerContext): void {
  const sender = valueAt(message.segments[0], 4);
  if (!sender || !senderAllowed(context.principal, sender)) {
    reject('AR', ErrorCodes.unknownKeyIdentifier, 'MSH-4 sending facility is not a sender this API key may submit for', {
      segmentId: 'MSH',
      segmentSequence: 1,
      field: 4,
    });
  }
}

async function handleAdt(message: ParsedMessage, services: HandlerDependencies, context: HandlerContext): Promise<HandledMessage> {
  const pid = firstSegment(message, 'PID');
  const identifier = patientIdentifier(pid);
  const name = personName(pid?.fields[5]?.[0]);
  const keys = await services.keys();
  const identifierKey = keys.patientIdentifierKey(identifier.authority, identifier.mrn);
  const known = await services.mrnIndex.find(identifierKey);
  const existing = known ? await services.chart.getPatient(known) : undefined;
  if (!existing && !name)
    reject('AE', ErrorCodes.requiredFieldMissing, 'PID-5 patient name (family name) is required for a new patient', {
      segmentId: 'PID',
      segmentSequence: 1,
      field: 5,
    });
  const patientId = known ?? (await services.mrnIndex.claim(identifierKey, patientIdFor(identifierKey), context.now));
  const base: Patient = existing ??
    (await services.chart.getPatient(patientId)) ?? { patientId, mrn: identifier.mrn, assigningAuthority: identifier.authority, name: name! };
  const patient = patientFrom(message, { ...base, patientId, mrn: identifier.mrn, assigningAuthority: identifier.authority });
  await services.chart.writePatient(patient, context.now);
  const event = valueAt(message.segments[0], 9, 2) || valueAt(firstSegment(message, 'EVN'), 1);
  return { audit: { action: `hl7.adt.patient_upsert`, patientId, resourceIds: { event, created: String(!existing) } } };
}

async function handleMerge(message: ParsedMessage, services: HandlerDependencies, context: HandlerContext): Promise<HandledMessage> {
  const identifier = patientIdentifier(firstSegment(message, 'PID'));
  const mrg = firstSegment(message, 'MRG');
  const priorMrn = present(valueAt(mrg, 1, 1));
  if (!priorMrn)
    reject('AE', ErrorCodes.requiredFieldMissing, 'MRG-1 prior patient identifier is required for a merge', { segmentId: 'MRG', segmentSequence: 1, field: 1 });
  const keys = await services.keys();
  const survivingKey = keys.patientIdentifierKey(identifier.authority, identifier.mrn);
  const survivingPatientId = await services.mrnIndex.find(survivingKey);
  if (!survivingPatientId)
    reject('AE', ErrorCodes.unknownKeyIdentifier, 'PID-3 names no patient known to the chart', { segmentId: 'PID', segmentSequence: 1, field: 3 });
  const priorIdentifierKey = keys.patientIdentifierKey(present(valueAt(mrg, 1, 4)) ?? identifier.authority, priorMrn);
  const priorPatientId = await services.mrnIndex.find(priorIdentifierKey);
  const reviewId = `merge-${keys.patientIdentifierKey(valueAt(message.segments[0], 4), valueAt(message.segments[0], 10)).slice(0, 24)}`;
  await services.merges.hold({
    reviewId,
    survivingPatientId,
    priorPatientId,
    priorIdentifierKey,
    partnerId: context.principal.partnerId,
    receivedAt: context.now,
  });
  return {
    audit: { action: 'hl7.adt.merge_held', patientId: survivingPatientId, resourceIds: compact({ reviewId, priorPatientId }) as Record<string, string> },
  };
}

// ---- MDM^T02 ----

async function handleMdm(message: ParsedMessage, services: HandlerDependencies, _context: HandlerContext): Promise<HandledMessage> {
  const identifier = patientIdentifier(firstSegment(message, 'PID'));
  const txa = firstSegment(message, 'TXA');
  if (!txa) reject('AE', ErrorCodes.segmentSequence, 'MDM^T02 requires a TXA segment', { segmentId: 'TXA' });
  const noteId = present(valueAt(txa, 12, 1));
  if (!noteId) reject('AE', ErrorCodes.requiredFieldMissing, 'TXA-12 unique document number is required', { segmentId: 'TXA', segmentSequence: 1, field: 12 });
  if (!/^[A-Za-z0-9._:-]{1,128}$/.test(noteId))
    reject('AE', ErrorCodes.dataType, 'TXA-12 must be 1-128 letters, digits or . _ : -', { segmentId: 'TXA', segmentSequence: 1, field: 12 });
  const author = clinician(txa.fields[9]?.[0]) ?? clinician(txa.fields[5]?.[0]);
  if (!author) reject('AE', ErrorCodes.requiredFieldMissing, 'TXA-9 (or TXA-5) author name is required', { segmentId: 'TXA', segmentSequence: 1, field: 9 });
  const createdAt = instantFromTs(
    present(valueAt(txa, 6)) ?? present(valueAt(txa, 4)) ?? present(valueAt(firstSegment(message, 'EVN'), 2)) ?? valueAt(message.segments[0], 7),
  );
  if (!createdAt)
    reject('AE', ErrorCodes.dataType, 'TXA-6 origination date-time must be a valid HL7 date-time', { segmentId: 'TXA', segmentSequence: 1, field: 6 });
  const lines = message.segments.filter((segment) => segment.name === 'OBX').map(obxText);
  const text = lines.join('\n');
  if (text.trim() === '') reject('AE', ErrorCodes.requiredFieldMissing, 'the note text (OBX-5) is empty', { segmentId: 'OBX', segmentSequence: 1, field: 5 });
  const keys = await services.keys();
  const patientId = await services.mrnIndex.find(keys.patientIdentifierKey(identifier.authority, identifier.mrn));
  if (!patientId)
    reject('AE', ErrorCodes.unknownKeyIdentifier, 'PID-3 names no patient known to the chart', { segmentId: 'PID', segmentSequence: 1, field: 3 });
  await services.chart.putNote({ patientId, noteId, author, createdAt, text });
  return { audit: { action: 'hl7.mdm.note_store', patientId, resourceIds: { noteId } } };
}

export { checkSender };
