import type { Assessment, AssessmentItem, Clinician, CodedValue, Encounter, Note } from '../chart/types';
import {
  ceFromCodedValue,
  eiFromIdentifier,
  isNumericText,
  nmFromNumber,
  tsFromDateTime,
  xcnFromClinician,
} from './datatypes';
import { escapeFormattedText, escapeText, hasLineBreak } from './escape';
import { Hl7EncodingError } from './errors';
import { type FieldValue, Segment } from './segment';
import { type CommonOrder, commonOrderSegment, patientClassCodedValue, requireComponents, requireFirstComponent } from './segments';
import { type ObservationResultStatus, type ObservationValueType, orderStatusCode, type ResultStatus } from './tables';

/*
 * ORU_R01 ORDER_OBSERVATION groups: [ORC] OBR {OBX}. OBR-1 numbers the groups of a message 1..n;
 * OBX-1 numbers the observations of one group 1..n.
 */

/** Local codes (coding system `L`) for observations that have no standard code in the chart data. */
export const LOCAL_CODES = {
  encounter: { code: 'ENCOUNTER', display: 'Encounter', system: 'L' },
  diagnosis: { code: 'DIAGNOSIS', display: 'Diagnosis', system: 'L' },
  patientClass: { code: 'PATIENT_CLASS', display: 'Patient class', system: 'L' },
  location: { code: 'LOCATION', display: 'Location', system: 'L' },
  attending: { code: 'ATTENDING', display: 'Attending doctor', system: 'L' },
  admitReason: { code: 'ADMIT_REASON', display: 'Admit reason', system: 'L' },
  order: { code: 'ORDER', display: 'Order', system: 'L' },
  orderId: { code: 'ORDER_ID', display: 'Order id', system: 'L' },
  orderStatus: { code: 'ORDER_STATUS', display: 'Order status', system: 'L' },
  orderingProvider: { code: 'ORDERING_PROVIDER', display: 'Ordering provider', system: 'L' },
  note: { code: 'NOTE', display: 'ChartNote', system: 'L' },
  assessmentTotal: { code: 'TOTAL', display: 'Total score', system: 'L' },
  assessmentInterpretation: { code: 'INTERPRETATION', display: 'Interpretation', system: 'L' },
  labResult: { code: 'LAB', display: 'Laboratory result', system: 'L' },
  noRecords: { code: 'NO_RECORDS', display: 'No chart records', system: 'L' },
} as const satisfies Record<string, CodedValue>;

/** An OBX-2 value type with its OBX-5 value. */
export interface ObservationValue {
  valueType: ObservationValueType;
  value: FieldValue;
}

/** Text as ST, or as TX (line breaks written `\.br\`) when it has more than one line. */
export function textObservationValue(text: string): ObservationValue {
  return hasLineBreak(text) ? { valueType: 'TX', value: escapeFormattedText(text) } : { valueType: 'ST', value: escapeText(text) };
}

/** NM when the number (or numeric text) has an NM form; otherwise the text as ST. */
export function numericObservationValue(value: number | string): ObservationValue {
  if (typeof value === 'number') {
    const nm = nmFromNumber(value);
    return nm === undefined ? textObservationValue(String(value)) : { valueType: 'NM', value: nm };
  }
  return isNumericText(value) ? { valueType: 'NM', value: escapeText(value) } : textObservationValue(value);
}

/** CE (v2.5.1 has no CWE value type in table 0125). */
export function codedObservationValue(coded: CodedValue): ObservationValue {
  return { valueType: 'CE', value: ceFromCodedValue(coded) };
}

/** XCN, for a clinician. */
export function clinicianObservationValue(clinician: Clinician): ObservationValue {
  return { valueType: 'XCN', value: xcnFromClinician(clinician) };
}

/** One OBX. */
export interface Observation extends ObservationValue {
  /** OBX-3 */
  identifier: CodedValue;
  /** OBX-4; assigned automatically when the same OBX-3 occurs more than once in a group */
  subId?: string;
  /** OBX-6, as the CE identifier */
  units?: string;
  /** OBX-7 */
  referenceRange?: string;
  /** OBX-11 (table 0085) */
  resultStatus: ObservationResultStatus;
  /** OBX-14 */
  observedAt?: string;
  /** OBX-16 */
  responsibleObserver?: Clinician;
  /** where the values came from, for error messages */
  inputPath: string;
}

/** The optional parts of an {@link Observation}. */
export type ObservationDetails = Pick<Observation, 'subId' | 'units' | 'referenceRange' | 'observedAt' | 'responsibleObserver'>;

/**
 * An {@link Observation}. Built as one object literal of a fixed shape rather than by object spreads
 * (`{ ...common, ...value, ... }`): spreads are slow to build, and observations of differing hidden
 * classes make every read of them in {@link observationSegment} slow as well.
 */
export function makeObservation(
  identifier: CodedValue,
  { valueType, value }: ObservationValue,
  resultStatus: ObservationResultStatus,
  inputPath: string,
  details: ObservationDetails = {},
): Observation {
  return {
    identifier,
    valueType,
    value,
    subId: details.subId,
    units: details.units,
    referenceRange: details.referenceRange,
    resultStatus,
    observedAt: details.observedAt,
    responsibleObserver: details.responsibleObserver,
    inputPath,
  };
}

/** One OBR. */
export interface ObservationRequest {
  /** OBR-2 */
  placerOrderNumber?: string;
  /** OBR-3 */
  fillerOrderNumber?: string;
  /** OBR-4 (required) */
  serviceIdentifier: CodedValue;
  /** OBR-6 */
  requestedAt?: string;
  /** OBR-7 */
  observedAt?: string;
  /** OBR-8 */
  observationEndAt?: string;
  /** OBR-16 */
  orderingProvider?: Clinician;
  /** OBR-22 */
  statusChangedAt?: string;
  /** OBR-25 (table 0123) */
  resultStatus?: ResultStatus;
  inputPath: string;
}

/** One ORDER_OBSERVATION group: optional ORC, the OBR, its OBX segments. */
export class ObservationGroup {
  readonly order: CommonOrder | undefined;
  readonly request: ObservationRequest;
  private readonly observations: Observation[] = [];

  constructor(request: ObservationRequest, order?: CommonOrder) {
    this.request = request;
    this.order = order;
  }

  add(...observations: Observation[]): this {
    this.observations.push(...observations);
    return this;
  }

  /** The group's segments, its OBR numbered `observationRequestSetId`. */
  toSegments(observationRequestSetId: number): Segment[] {
    return this.appendSegments([], observationRequestSetId);
  }

  /** {@link toSegments}, appended to `segments` (one list for a whole message, no per-group arrays). */
  appendSegments(segments: Segment[], observationRequestSetId: number): Segment[] {
    if (this.order) {
      segments.push(commonOrderSegment(this.order));
    }
    segments.push(this.observationRequestSegment(observationRequestSetId));
    const subIds = assignSubIds(this.observations);
    this.observations.forEach((observation, index) => {
      segments.push(observationSegment(observation, index + 1, subIds[index]));
    });
    return segments;
  }

  private observationRequestSegment(setId: number): Segment {
    const { request } = this;
    const obr = new Segment('OBR')
      .set(1, escapeText(String(setId)))
      .set(4, requireComponents(ceFromCodedValue(request.serviceIdentifier), request.inputPath, '.code'));
    if (request.placerOrderNumber !== undefined) {
      obr.set(2, eiFromIdentifier(request.placerOrderNumber));
    }
    if (request.fillerOrderNumber !== undefined) {
      obr.set(3, eiFromIdentifier(request.fillerOrderNumber));
    }
    setTime(obr, 6, request.requestedAt, request.inputPath);
    setTime(obr, 7, request.observedAt, request.inputPath);
    setTime(obr, 8, request.observationEndAt, request.inputPath);
    if (request.orderingProvider) {
      obr.set(16, xcnFromClinician(request.orderingProvider));
    }
    setTime(obr, 22, request.statusChangedAt, request.inputPath);
    if (request.resultStatus) {
      obr.set(25, escapeText(request.resultStatus));
    }
    return obr;
  }
}

function setTime(segment: Segment, field: number, value: string | undefined, inputPath: string): void {
  if (value !== undefined) {
    segment.set(field, tsFromDateTime(value, inputPath));
  }
}

/**
 * What identifies an observation: its code within its coding system, or its text when it has no code.
 * Keys of different identifiers differ: `c` + the code's length + `:` + code + system (the length tells
 * where the code ends), or `t` + the text.
 */
function identifierKey(identifier: CodedValue): string {
  // (data that bypassed the types gets JSON keys, which tell `5` from `'5'` and never start with c or t)
  const code: unknown = identifier.code;
  if (code !== '') {
    const system: unknown = identifier.system ?? '';
    return typeof code === 'string' && typeof system === 'string' ? `c${code.length}:${code}${system}` : JSON.stringify(['code', code, system]);
  }
  const display: unknown = identifier.display ?? '';
  return typeof display === 'string' ? `t${display}` : JSON.stringify(['text', display]);
}

/**
 * OBX-4: HL7 asks OBX-3 + OBX-4 to be unique within an OBR. Observations given a sub-id keep it; the
 * others get 1..k when their OBX-3 occurs more than once in the group.
 */
function assignSubIds(observations: readonly Observation[]): Array<string | undefined> {
  // key of each observation that needs one (computed once), and how often each key occurs
  const keys = observations.map((observation) => (observation.subId === undefined ? identifierKey(observation.identifier) : ''));
  const counts = new Map<string, number>();
  observations.forEach((observation, index) => {
    if (observation.subId === undefined) {
      const key = keys[index]!;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  });
  const next = new Map<string, number>();
  return observations.map((observation, index) => {
    if (observation.subId !== undefined) {
      return observation.subId;
    }
    const key = keys[index]!;
    if ((counts.get(key) ?? 0) < 2) {
      return undefined;
    }
    const subId = (next.get(key) ?? 0) + 1;
    next.set(key, subId);
    return String(subId);
  });
}

function observationSegment(observation: Observation, setId: number, subId: string | undefined): Segment {
  const obx = new Segment('OBX')
    .set(1, escapeText(String(setId)))
    .set(2, escapeText(observation.valueType))
    .set(3, requireComponents(ceFromCodedValue(observation.identifier), observation.inputPath, '.code'))
    .set(4, escapeText(subId))
    .set(5, observation.value)
    .set(11, escapeText(observation.resultStatus));
  if (observation.units) {
    obx.set(6, [escapeText(observation.units)]);
  }
  if (observation.referenceRange) {
    obx.set(7, escapeText(observation.referenceRange));
  }
  setTime(obx, 14, observation.observedAt, observation.inputPath);
  if (observation.responsibleObserver) {
    obx.set(16, xcnFromClinician(observation.responsibleObserver));
  }
  return obx;
}

/** The ORDER_OBSERVATION groups of a message, OBR-1 numbered 1..n in the order given. */
export function orderObservationSegments(groups: readonly ObservationGroup[]): Segment[] {
  const segments: Segment[] = [];
  groups.forEach((group, index) => group.appendSegments(segments, index + 1));
  return segments;
}

// --- Chart records as observation groups -------------------------------------------------------------------

/** How much of the encounter goes into OBX segments. */
export interface EncounterGroupOptions {
  /**
   * `true` when no PV1/PV2 carries the visit (the patient summary): class, location, attending, admit
   * reason and the orders become OBX segments too. `false` when PV1/PV2 and ORC/OBR groups carry them.
   */
  visitAsObservations: boolean;
  inputPath: string;
}

/**
 * The encounter as one group: OBR-3 encounter id, OBR-4 `ENCOUNTER^Encounter^L`, OBR-7 admit, OBR-8
 * discharge; one CE OBX per diagnosis (OBX-4 numbering them). OBR-25 and every OBX-11 are `F` (final)
 * once the encounter has been discharged and `P` (preliminary) while it is open: this is where the
 * final / working distinction of DG1-6 (table 0052 F / W) goes, as ORU_R01 has no DG1. With `visitAsObservations`,
 * also class (CE, table 0004), location (ST), attending (XCN), admit reason (ST/TX), and per order n the
 * OBX set ORDER (CE, OBX-14 ordered at), ORDER_ID (ST), ORDER_STATUS (ST), ORDERING_PROVIDER (XCN),
 * all with OBX-4 = n.
 */
export function encounterObservationGroup(encounter: Encounter, options: EncounterGroupOptions): ObservationGroup {
  const { inputPath } = options;
  const group = new ObservationGroup({
    fillerOrderNumber: encounter.encounterId,
    serviceIdentifier: LOCAL_CODES.encounter,
    observedAt: encounter.admitAt,
    observationEndAt: encounter.dischargeAt,
    resultStatus: encounter.dischargeAt ? 'F' : 'P',
    inputPath,
  });
  const status = encounter.dischargeAt ? 'F' : 'P';
  if (options.visitAsObservations) {
    group.add(makeObservation(LOCAL_CODES.patientClass, codedObservationValue(patientClassCodedValue(encounter, `${inputPath}.patientClass`)), status, inputPath));
    if (encounter.location) {
      group.add(makeObservation(LOCAL_CODES.location, textObservationValue(encounter.location), status, inputPath));
    }
    if (encounter.attending) {
      group.add(makeObservation(LOCAL_CODES.attending, clinicianObservationValue(encounter.attending), status, inputPath));
    }
    if (encounter.reason) {
      group.add(makeObservation(LOCAL_CODES.admitReason, textObservationValue(encounter.reason), status, inputPath));
    }
  }
  (encounter.diagnoses ?? []).forEach((diagnosis, index) => {
    const path = `${inputPath}.diagnoses[${index}]`;
    requireComponents(ceFromCodedValue(diagnosis), path);
    group.add(makeObservation(LOCAL_CODES.diagnosis, codedObservationValue(diagnosis), status, path, { subId: String(index + 1) }));
  });
  if (options.visitAsObservations) {
    (encounter.orders ?? []).forEach((order, index) => {
      const path = `${inputPath}.orders[${index}]`;
      const subId = String(index + 1);
      group.add(
        makeObservation(LOCAL_CODES.order, codedObservationValue(order.code), status, path, { subId, observedAt: order.orderedAt }),
        makeObservation(LOCAL_CODES.orderId, textObservationValue(order.orderId), status, path, { subId }),
      );
      if (order.status) {
        group.add(makeObservation(LOCAL_CODES.orderStatus, textObservationValue(order.status), status, path, { subId }));
      }
      if (order.orderingProvider) {
        group.add(makeObservation(LOCAL_CODES.orderingProvider, clinicianObservationValue(order.orderingProvider), status, path, { subId }));
      }
    });
  }
  return group;
}

/**
 * One ORC/OBR group per encounter order: ORC-1 `RE`, ORC-2 and OBR-2 the order id, ORC-5 the status
 * when it maps to table 0038, ORC-9 and OBR-6 the order time, ORC-12 and OBR-16 the ordering provider,
 * OBR-4 the order code.
 */
export function encounterOrderGroups(encounter: Encounter, inputPath: string): ObservationGroup[] {
  return (encounter.orders ?? []).map((order, index) => {
    const path = `${inputPath}.orders[${index}]`;
    requireFirstComponent(eiFromIdentifier(order.orderId), path, '.orderId');
    return new ObservationGroup(
      {
        placerOrderNumber: order.orderId,
        serviceIdentifier: order.code,
        requestedAt: order.orderedAt,
        orderingProvider: order.orderingProvider,
        inputPath: path,
      },
      {
        placerOrderNumber: order.orderId,
        orderStatus: orderStatusCode(order.status),
        transactionAt: order.orderedAt,
        orderingProvider: order.orderingProvider,
        inputPath: path,
      },
    );
  });
}

/**
 * The note as one group: OBR-3 note id, OBR-4 `NOTE^ChartNote^L`, OBR-7 created at, OBR-25 `F`; one TX
 * OBX with the whole text (line breaks as `\.br\`), OBX-14 created at, OBX-16 the author.
 */
export function noteObservationGroup(note: Note, inputPath: string): ObservationGroup {
  return new ObservationGroup({
    fillerOrderNumber: note.noteId,
    serviceIdentifier: LOCAL_CODES.note,
    observedAt: note.createdAt,
    resultStatus: 'F',
    inputPath,
  }).add(
    makeObservation(LOCAL_CODES.note, { valueType: 'TX', value: escapeFormattedText(note.text) }, 'F', inputPath, {
      observedAt: note.createdAt,
      responsibleObserver: note.author,
    }),
  );
}

function assessmentItemValue(item: AssessmentItem): ObservationValue {
  const { value } = item;
  if (value === null || value === undefined) {
    return textObservationValue('');
  }
  if (typeof value === 'object') {
    return codedObservationValue(value);
  }
  switch (item.kind) {
    case 'numeric':
      return numericObservationValue(value);
    case 'coded':
      return codedObservationValue({ code: String(value) });
    case 'text':
    default:
      return textObservationValue(String(value));
  }
}

/**
 * The assessment as one group: OBR-3 assessment id, OBR-4 the assessment code, OBR-7 performed at,
 * OBR-25 `F`. One OBX per item: NM (numeric), ST or TX (text; TX when multi-line), CE (coded); OBX-6
 * the item's units. Then the total as NM and the interpretation as ST/TX (local codes TOTAL and
 * INTERPRETATION). Every OBX: OBX-11 `F`, OBX-14 performed at, OBX-16 the performer.
 */
export function assessmentObservationGroup(assessment: Assessment, inputPath: string): ObservationGroup {
  const performed: ObservationDetails = { observedAt: assessment.performedAt, responsibleObserver: assessment.performer };
  const group = new ObservationGroup({
    fillerOrderNumber: assessment.assessmentId,
    serviceIdentifier: assessment.code,
    observedAt: assessment.performedAt,
    resultStatus: 'F',
    inputPath,
  });
  assessment.items.forEach((item, index) => {
    const details: ObservationDetails = { observedAt: assessment.performedAt, responsibleObserver: assessment.performer, units: item.units };
    group.add(makeObservation(item.code, assessmentItemValue(item), 'F', `${inputPath}.items[${index}]`, details));
  });
  if (assessment.total !== undefined) {
    group.add(makeObservation(LOCAL_CODES.assessmentTotal, numericObservationValue(assessment.total), 'F', `${inputPath}.total`, performed));
  }
  if (assessment.interpretation) {
    group.add(makeObservation(LOCAL_CODES.assessmentInterpretation, textObservationValue(assessment.interpretation), 'F', `${inputPath}.interpretation`, performed));
  }
  return group;
}

/** The HL7-facing shape of a lab result for the patient summary. */
export interface LabResultSummary {
  resultId: string;
  accessionNumber: string;
  status: 'preliminary' | 'final' | 'corrected' | 'amended' | 'cancelled';
  /** ISO 8601 date-time */
  resultedAt: string;
  results: Array<{ testName: string; result: string; units?: string; referenceRange?: string }>;
}

/** Lab status -> OBX-11 (table 0085) and OBR-25 (table 0123). Amended is a correction in both tables. */
const LAB_STATUS: Record<LabResultSummary['status'], { observation: ObservationResultStatus; request: ResultStatus }> = {
  preliminary: { observation: 'P', request: 'P' },
  final: { observation: 'F', request: 'F' },
  corrected: { observation: 'C', request: 'C' },
  amended: { observation: 'C', request: 'C' },
  cancelled: { observation: 'X', request: 'X' },
};

/**
 * A lab result as one group: OBR-2 result id, OBR-3 accession number, OBR-4 `LAB^Laboratory result^L`,
 * OBR-22 resulted at (OBR-7, the observation time, is unknown), OBR-25 from the status. One OBX per test: OBX-3 `^TEST NAME` (text
 * only: the summary carries no test code), OBX-2/OBX-5 NM when the result is numeric text else ST/TX,
 * OBX-6 units, OBX-7 reference range, OBX-11 from the status, OBX-14 resulted at.
 */
export function labResultObservationGroup(lab: LabResultSummary, inputPath: string): ObservationGroup {
  const status = Object.prototype.hasOwnProperty.call(LAB_STATUS, lab.status) ? LAB_STATUS[lab.status] : undefined;
  if (!status) {
    throw new Hl7EncodingError(`${inputPath}.status`, 'is not a known lab result status');
  }
  const group = new ObservationGroup({
    placerOrderNumber: lab.resultId,
    fillerOrderNumber: lab.accessionNumber,
    serviceIdentifier: LOCAL_CODES.labResult,
    statusChangedAt: lab.resultedAt,
    resultStatus: status.request,
    inputPath,
  });
  lab.results.forEach((result, index) => {
    group.add(
      makeObservation({ code: '', display: result.testName }, numericObservationValue(result.result), status.observation, `${inputPath}.results[${index}].testName`, {
        units: result.units,
        referenceRange: result.referenceRange,
        observedAt: lab.resultedAt,
      }),
    );
  });
  return group;
}

/**
 * ORU_R01 requires at least one ORDER_OBSERVATION group with its OBR. A patient with nothing to report
 * gets a single OBR, OBR-4 `NO_RECORDS^No chart records^L`, without observations.
 */
export function noRecordsObservationGroup(): ObservationGroup {
  return new ObservationGroup({ serviceIdentifier: LOCAL_CODES.noRecords, inputPath: 'records' });
}
