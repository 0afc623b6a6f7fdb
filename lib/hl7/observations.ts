import type {
  AssignedIdentifier,
  Assessment,
  AssessmentItem,
  Clinician,
  CodedValue,
  Encounter,
  EncounterOrder,
  LabAddress,
  LabDocumentSummary,
  LabPerformer,
  LabPerson,
  LabResultSummary,
  LabSpecimen,
  LabTestSummary,
  Note,
} from '../chart/types';
import { hasAlternateCodeOnly } from '../chart/types';

export type { LabResultSummary, LabTestSummary } from '../chart/types';
import {
  ceFromCodedValue,
  ceWithAlternate,
  eiFromIdentifier,
  isNumericText,
  nmFromNumber,
  siFromNumber,
  tsFromDateTime,
  tsFromPartialDateTime,
  xcnFromClinician,
} from './datatypes';
import { type EscapedText, escapeFormattedText, escapeText, escapeTextLines, hasLineBreak } from './escape';
import { Hl7EncodingError } from './errors';
import { type IdentifierNamespaces, IDENTIFIER_LENGTH, shortIdentifier } from './identifiers';
import { type FieldValue, Segment } from './segment';
import { setPerformingOrganizationFields } from './performing-organization';
import { chartTimeAsWritten, type CommonOrder, commonOrderSegment, patientClassCodedValue, requireComponents, requireFirstComponent } from './segments';
import {
  ORDER_CONTROL_RESULTS,
  ORDER_CONTROL_STATUS_CHANGED,
  observationResultStatus,
  type ObservationResultStatus,
  type ObservationValueType,
  orderStatusCode,
  resultStatus,
  type ResultStatus,
} from './tables';

/*
 * ORU_R01 ORDER_OBSERVATION groups: [ORC] OBR [{NTE}] {OBX [{NTE}]}. OBR-1 numbers the groups of a
 * message 1..n; OBX-1 numbers the observations of one group 1..n; NTE-1 numbers the notes under one
 * OBR or OBX 1..n. These are the building blocks of every result message (the patient summary, the
 * assessment and encounter messages, and any single-result ORU^R01 export).
 *
 * Receiver rules kept here (hl7-notes.md, "What receiving engines need"):
 * - every OBR carries OBR-7 (observation time) and OBR-25 (result status, table 0123): both are
 *   required by {@link ObservationRequest};
 * - ORC-1 `RE` only when observations follow; an order without results goes with ORC-1 `SC` and an
 *   OBR-25 that says no results are available ({@link pendingOrderGroup});
 * - OBX-3 always coded (code^text^system), with a local code (`L`) when the source has none;
 * - OBX-2 matches OBX-5: NM for numbers, SN for comparator values (`<^2.5`) and ratios (`^1^:^40`), ST
 *   for short single-line text, TX otherwise with one repetition per line (no formatting commands);
 * - comments in NTE, not in OBX.
 */

/** Local codes (coding system `L`) for observations that have no standard code in the chart data. */
export const LOCAL_CODES = {
  encounter: { code: 'ENCOUNTER', display: 'Encounter', system: 'L' },
  diagnosis: { code: 'DIAGNOSIS', display: 'Diagnosis', system: 'L' },
  patientClass: { code: 'PATIENT_CLASS', display: 'Patient class', system: 'L' },
  location: { code: 'LOCATION', display: 'Location', system: 'L' },
  attending: { code: 'ATTENDING', display: 'Attending doctor', system: 'L' },
  admitReason: { code: 'ADMIT_REASON', display: 'Admit reason', system: 'L' },
  note: { code: 'NOTE', display: 'ChartNote', system: 'L' },
  assessmentTotal: { code: 'TOTAL', display: 'Total score', system: 'L' },
  assessmentInterpretation: { code: 'INTERPRETATION', display: 'Interpretation', system: 'L' },
  labResult: { code: 'LAB', display: 'Laboratory result', system: 'L' },
  noRecords: { code: 'NO_RECORDS', display: 'No chart records', system: 'L' },
  summaryCut: { code: 'SUMMARY_CUT', display: 'Summary cut at its size budget', system: 'L' },
} as const satisfies Record<string, CodedValue>;

/** Longest ST value written; longer text goes as TX (v2.5.1 gives ST a maximum length of 199). */
export const ST_MAX_LENGTH = 199;

/**
 * OBX-5 of a TX observation: one repetition per line, given as escaped lines, or as the RAW text, escaped
 * line by line as it is written (Segment.setTextLines: one scan for ASCII text).
 */
export type TextLines = { lines: readonly EscapedText[] } | { text: string };

/** An OBX-2 value type with its OBX-5 value. */
export interface ObservationValue {
  /** OBX-2; a lab's date or time value keeps its own type (DT, TM, DTM, TS) */
  valueType: ObservationValueType | 'DT' | 'TM' | 'TS';
  value: FieldValue | TextLines;
}

/** Text as TX, one repetition per line (empty lines kept). */
export function textLinesObservationValue(text: string): ObservationValue {
  // anything but a string (data that bypassed the types) is refused here, as escaping refuses it
  return { valueType: 'TX', value: typeof text === 'string' ? { text } : { lines: escapeTextLines(text) } };
}

/** Text as ST when it is one line of at most {@link ST_MAX_LENGTH} characters, else as TX (lines). */
export function textObservationValue(text: string): ObservationValue {
  return hasLineBreak(text) || text.length > ST_MAX_LENGTH ? textLinesObservationValue(text) : { valueType: 'ST', value: escapeText(text) };
}

/** A comparator and a number (`<2.5`, `>= 10`), or a ratio (`1:40`): the SN forms of a lab value. */
const COMPARATOR_VALUE = /^\s*(<=|>=|<>|<|>|=)\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*$/;
const RATIO_VALUE = /^\s*(\d+(?:\.\d*)?)\s*([:/])\s*(\d+(?:\.\d*)?)\s*$/;

/** SN (structured numeric) when the text is a comparator value or a ratio; `undefined` otherwise. */
export function structuredNumericValue(text: string): ObservationValue | undefined {
  const comparator = COMPARATOR_VALUE.exec(text);
  if (comparator) {
    return { valueType: 'SN', value: [escapeText(comparator[1]), escapeText(comparator[2])] };
  }
  const ratio = RATIO_VALUE.exec(text);
  if (ratio) {
    return { valueType: 'SN', value: [escapeText(''), escapeText(ratio[1]), escapeText(ratio[2]), escapeText(ratio[3])] };
  }
  return undefined;
}

/** NM when the number (or numeric text) has an NM form; SN for comparators and ratios; otherwise text. */
export function numericObservationValue(value: number | string): ObservationValue {
  if (typeof value === 'number') {
    const nm = nmFromNumber(value);
    return nm === undefined ? textObservationValue(String(value)) : { valueType: 'NM', value: nm };
  }
  if (isNumericText(value)) {
    return { valueType: 'NM', value: escapeText(value) };
  }
  return structuredNumericValue(value) ?? textObservationValue(value);
}

/** CE (v2.5.1 has no CWE value type in table 0125). */
export function codedObservationValue(coded: CodedValue): ObservationValue {
  return { valueType: 'CE', value: ceFromCodedValue(coded) };
}

/** XCN, for a clinician. */
export function clinicianObservationValue(clinician: Clinician, namespaces: IdentifierNamespaces): ObservationValue {
  return { valueType: 'XCN', value: xcnFromClinician(clinician, namespaces.clinician) };
}

/**
 * A time as the sender wrote it (lib/chart/types.ts PartialDateTime): written by
 * {@link tsFromPartialDateTime}, keeping its precision and zone, instead of in UTC to the second.
 */
export interface TimeAsSent {
  asSent: string;
}

/** A time of a segment: an instant (written in UTC, {@link tsFromDateTime}) or a time as the sender wrote it. */
export type SegmentTime = string | Date | TimeAsSent;

/** One OBX. */
export interface Observation extends ObservationValue {
  /** OBX-3 */
  identifier: CodedValue;
  /** OBX-3.4-6, the alternate code */
  alternateIdentifier?: CodedValue;
  /** OBX-4; assigned automatically when the same OBX-3 occurs more than once in a group */
  subId?: string;
  /** OBX-6, as the CE identifier (or as the CE text when `unitsCode` is given) */
  units?: string;
  /** OBX-6.1 the UCUM code (OBX-6.3 `UCUM`) */
  unitsCode?: string;
  /** OBX-7 */
  referenceRange?: string;
  /** OBX-8, one repetition per flag (table 0078) */
  abnormalFlags?: string[];
  /** OBX-11 (table 0085) */
  resultStatus: ObservationResultStatus;
  /** OBX-14 */
  observedAt?: SegmentTime;
  /** OBX-16 */
  responsibleObserver?: Clinician;
  /** OBX-19 the time of the analysis */
  analyzedAt?: SegmentTime;
  /** OBX-23 XON-1: the organization whose result it is (the lab's sender id: provenance) */
  performingOrganization?: string;
  /** OBX-23 XON-10 with XON-6 (assigning authority) and XON-7 (identifier type) */
  performingOrganizationIdentifier?: AssignedIdentifier;
  /** OBX-24 (XAD) */
  performingOrganizationAddress?: LabAddress;
  /** OBX-25 (XCN) */
  performingOrganizationDirector?: LabPerson;
  /** writes OBX-23/24/25 from the fields above (set by the lab path: labResultObservationGroup) */
  writePerformingOrganization?: (obx: Segment, observation: Observation) => void;
  /** NTE segments after the OBX */
  comments?: string[];
  /** where the values came from, for error messages */
  inputPath: string;
}

/** The optional parts of an {@link Observation}. */
export type ObservationDetails = Pick<
  Observation,
  | 'alternateIdentifier'
  | 'subId'
  | 'units'
  | 'unitsCode'
  | 'referenceRange'
  | 'abnormalFlags'
  | 'observedAt'
  | 'responsibleObserver'
  | 'analyzedAt'
  | 'performingOrganization'
  | 'performingOrganizationIdentifier'
  | 'performingOrganizationAddress'
  | 'performingOrganizationDirector'
  | 'writePerformingOrganization'
  | 'comments'
>;

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
    alternateIdentifier: details.alternateIdentifier,
    valueType,
    value,
    subId: details.subId,
    units: details.units,
    unitsCode: details.unitsCode,
    referenceRange: details.referenceRange,
    abnormalFlags: details.abnormalFlags,
    resultStatus,
    observedAt: details.observedAt,
    responsibleObserver: details.responsibleObserver,
    analyzedAt: details.analyzedAt,
    performingOrganization: details.performingOrganization,
    performingOrganizationIdentifier: details.performingOrganizationIdentifier,
    performingOrganizationAddress: details.performingOrganizationAddress,
    performingOrganizationDirector: details.performingOrganizationDirector,
    writePerformingOrganization: details.writePerformingOrganization,
    comments: details.comments,
    inputPath,
  };
}

/** HD-1 namespace id length (IS, 20 characters). */
const HD_NAMESPACE_LENGTH = 20;

/** Table 0396 name of UCUM (OBX-6.3 when OBX-6.1 is a UCUM code). */
const UCUM = 'UCUM';

/** One OBR. OBR-7 and OBR-25 are required: a receiver of results files a group by them. */
export interface ObservationRequest {
  /** OBR-2 (EI-1 short form, EI-2 the entity namespace, or `placerNamespace` when given: the sender's) */
  placerOrderNumber?: string;
  placerNamespace?: string;
  /** OBR-3 (as OBR-2); `fillerOrderNumberLength` overrides the EI-1 length (the note's document number) */
  fillerOrderNumber?: string;
  fillerOrderNumberLength?: number;
  fillerNamespace?: string;
  /** OBR-4 (required) */
  serviceIdentifier: CodedValue;
  /** OBR-6 */
  requestedAt?: SegmentTime;
  /** OBR-7 (required in result messages) */
  observedAt: SegmentTime;
  /** OBR-8 */
  observationEndAt?: SegmentTime;
  /** OBR-16; XCN-9 `orderingProviderAuthority` when given (a lab's clinician: the sender), else the clinician namespace */
  orderingProvider?: Clinician;
  orderingProviderAuthority?: string;
  /** OBR-22 */
  statusChangedAt?: SegmentTime;
  /** OBR-25 (table 0123, required in result messages) */
  resultStatus: ResultStatus;
  /** NTE segments after the OBR (NTE-2 `L`, NTE-3 the text as FT) */
  comments?: string[];
  /** the SPECIMEN group (SPM) after the group's observations */
  specimen?: LabSpecimen;
  inputPath: string;
}

/** Table 0105 source of comment: the ancillary (filler) department, i.e. the service reporting. */
const COMMENT_SOURCE_FILLER = 'L';

/** NTE segments numbered 1..n: NTE-1 set id, NTE-2 `L`, NTE-3 the comment (FT, line breaks `\.br\`). */
export function noteSegments(comments: readonly string[] | undefined): Segment[] {
  return (comments ?? [])
    .filter((comment) => typeof comment === 'string' && comment.trim() !== '')
    .map((comment, index) =>
      new Segment('NTE')
        .set(1, siFromNumber(index + 1))
        .set(2, escapeText(COMMENT_SOURCE_FILLER))
        .set(3, escapeFormattedText(comment)),
    );
}

/** One ORDER_OBSERVATION group: optional ORC, the OBR, its NTE, its OBX segments (each with its NTE). */
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

  get observationCount(): number {
    return this.observations.length;
  }

  /** The group's segments, its OBR numbered `observationRequestSetId`. */
  toSegments(observationRequestSetId: number, namespaces: IdentifierNamespaces): Segment[] {
    return this.appendSegments([], observationRequestSetId, namespaces);
  }

  /** {@link toSegments}, appended to `segments` (one list for a whole message, no per-group arrays). */
  appendSegments(segments: Segment[], observationRequestSetId: number, namespaces: IdentifierNamespaces): Segment[] {
    if (this.order) {
      segments.push(commonOrderSegment(this.order, namespaces));
    }
    segments.push(this.observationRequestSegment(observationRequestSetId, namespaces));
    segments.push(...noteSegments(this.request.comments));
    const subIds = assignSubIds(this.observations);
    let previous: { observation: Observation; segment: Segment } | undefined;
    this.observations.forEach((observation, index) => {
      const segment = observationSegment(observation, index + 1, subIds[index], namespaces, previous);
      segments.push(segment);
      segments.push(...noteSegments(observation.comments));
      previous = { observation, segment };
    });
    const specimen = this.request.specimen && specimenSegment(this.request.specimen, `${this.request.inputPath}.order.specimen`);
    if (specimen) {
      segments.push(specimen);
    }
    return segments;
  }

  private observationRequestSegment(setId: number, namespaces: IdentifierNamespaces): Segment {
    const { request } = this;
    // OBR-4, 7 and 25 checked first, as before; the fields are set in order (the segment's text grows as they are)
    const serviceIdentifier = requireComponents(ceFromCodedValue(request.serviceIdentifier), request.inputPath, '.code');
    const observedAt = segmentTime(request.observedAt, request.inputPath);
    const resultStatus = escapeText(request.resultStatus);
    const obr = new Segment('OBR').set(1, siFromNumber(setId));
    if (request.placerOrderNumber !== undefined) {
      obr.set(2, eiFromIdentifier(request.placerOrderNumber, request.placerNamespace || namespaces.entity));
    }
    if (request.fillerOrderNumber !== undefined) {
      obr.set(3, eiFromIdentifier(request.fillerOrderNumber, request.fillerNamespace || namespaces.entity, request.fillerOrderNumberLength));
    }
    obr.set(4, serviceIdentifier);
    setTime(obr, 6, request.requestedAt, request.inputPath);
    obr.set(7, observedAt);
    setTime(obr, 8, request.observationEndAt, request.inputPath);
    if (request.orderingProvider) {
      obr.set(16, xcnFromClinician(request.orderingProvider, request.orderingProviderAuthority || namespaces.clinician));
    }
    setTime(obr, 22, request.statusChangedAt, request.inputPath);
    return obr.set(25, resultStatus);
  }
}

function isTimeAsSent(value: SegmentTime): value is TimeAsSent {
  return typeof value === 'object' && value !== null && 'asSent' in value;
}

function segmentTime(value: SegmentTime, inputPath: string): EscapedText {
  return isTimeAsSent(value) ? tsFromPartialDateTime(value.asSent, inputPath) : tsFromDateTime(value, inputPath);
}

function setTime(segment: Segment, field: number, value: SegmentTime | undefined, inputPath: string): void {
  if (value !== undefined) {
    segment.set(field, segmentTime(value, inputPath));
  }
}

/**
 * SPM of a lab order's specimen (the ORU_R01 SPECIMEN group, after the group's OBX): SPM-1 `1`, SPM-2
 * the specimen id as the filler's EI (`^ID&NAMESPACE`), SPM-4 the specimen type (CWE, required),
 * SPM-17 the collection time (DR-1, precision kept). `undefined` when the type is not known (SPM-4 is
 * required; the collection time is OBR-7 then).
 */
function specimenSegment(specimen: LabSpecimen, inputPath: string): Segment | undefined {
  const type = specimen.type;
  if (!type || typeof type.code !== 'string' || (type.code.trim() === '' && !type.display)) {
    return undefined;
  }
  const spm = new Segment('SPM').set(1, escapeText('1')).set(4, ceFromCodedValue(type));
  if (specimen.id && typeof specimen.id.id === 'string' && specimen.id.id.trim() !== '') {
    spm.set(2, [escapeText(''), [escapeText(specimen.id.id), escapeText(specimen.id.namespace)]]);
  }
  if (specimen.collectedAt) {
    spm.set(17, [segmentTime({ asSent: specimen.collectedAt }, `${inputPath}.collectedAt`)]);
  }
  return spm;
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

/** The key of an OBX-3: its primary coding, or (`a` + its key) the alternate when the primary is empty. */
function observationKey(observation: Observation): string {
  const { identifier, alternateIdentifier } = observation;
  return identifier.code === '' && !identifier.display && alternateIdentifier ? `a${identifierKey(alternateIdentifier)}` : identifierKey(identifier);
}

/**
 * OBX-4: HL7 asks OBX-3 + OBX-4 to be unique within an OBR. Observations given a sub-id keep it; the
 * others get 1..k when their OBX-3 occurs more than once in the group, skipping the numbers given.
 */
function assignSubIds(observations: readonly Observation[]): Array<string | undefined> {
  const keys = observations.map((observation) => (observation.subId === undefined ? observationKey(observation) : ''));
  const counts = new Map<string, number>();
  observations.forEach((observation, index) => {
    if (observation.subId === undefined) {
      const key = keys[index]!;
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
  });
  // the sub-ids the lab gave, per OBX-3: a number given to the others skips them (OBX-3 + OBX-4 stay unique)
  const given = new Map<string, Set<string>>();
  observations.forEach((observation) => {
    if (observation.subId === undefined) return;
    const key = observationKey(observation);
    const ids = given.get(key) ?? new Set<string>();
    ids.add(observation.subId.trim());
    given.set(key, ids);
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
    let subId = (next.get(key) ?? 0) + 1;
    while (given.get(key)?.has(String(subId))) subId += 1;
    next.set(key, subId);
    return String(subId);
  });
}

function isTextLines(value: FieldValue | TextLines): value is TextLines {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && ('lines' in value || 'text' in value);
}

/**
 * One OBX. `previous` is the OBX before it in the group: the same observation time (OBX-14) and
 * responsible observer (OBX-16), as an assessment's rows have, are written once and copied.
 */
function observationSegment(
  observation: Observation,
  setId: number,
  subId: string | undefined,
  namespaces: IdentifierNamespaces,
  previous?: { observation: Observation; segment: Segment },
): Segment {
  const obx = new Segment('OBX')
    .set(1, siFromNumber(setId))
    .set(2, escapeText(observation.valueType))
    .set(3, requireComponents(ceWithAlternate(observation.identifier, observation.alternateIdentifier), observation.inputPath, '.code'))
    .set(4, escapeText(subId));
  const resultStatus = escapeText(observation.resultStatus); // OBX-11, set after OBX-8: the fields in order
  const { value } = observation;
  if (isTextLines(value)) {
    if ('text' in value) obx.setTextLines(5, value.text);
    else obx.setLines(5, value.lines);
  } else {
    obx.set(5, value);
  }
  if (observation.unitsCode) {
    obx.set(6, [escapeText(observation.unitsCode), escapeText(observation.units || observation.unitsCode), escapeText(UCUM)]);
  } else if (observation.units) {
    obx.set(6, [escapeText(observation.units)]);
  }
  if (observation.referenceRange) {
    obx.set(7, escapeText(observation.referenceRange));
  }
  if (observation.abnormalFlags && observation.abnormalFlags.length > 0) {
    obx.setRepetitions(
      8,
      observation.abnormalFlags.map((flag) => [escapeText(flag)]),
    );
  }
  obx.set(11, resultStatus);
  if (previous && observation.observedAt !== undefined && previous.observation.observedAt === observation.observedAt) {
    obx.copyFieldFrom(previous.segment, 14); // the same time as the row before (an assessment's rows)
  } else {
    setTime(obx, 14, observation.observedAt, observation.inputPath);
  }
  if (observation.responsibleObserver) {
    if (previous && previous.observation.responsibleObserver === observation.responsibleObserver) {
      obx.copyFieldFrom(previous.segment, 16);
    } else {
      obx.set(16, xcnFromClinician(observation.responsibleObserver, namespaces.clinician));
    }
  }
  setTime(obx, 19, observation.analyzedAt, observation.inputPath);
  // OBX-23/24/25: written by the lab path's writer only (lib/hl7/performing-organization.ts), so the
  // encounter and assessment exports do not carry it
  observation.writePerformingOrganization?.(obx, observation);
  return obx;
}

/** The ORDER_OBSERVATION groups of a message, OBR-1 numbered 1..n in the order given. */
export function orderObservationSegments(groups: readonly ObservationGroup[], namespaces: IdentifierNamespaces): Segment[] {
  const segments: Segment[] = [];
  groups.forEach((group, index) => group.appendSegments(segments, index + 1, namespaces));
  return segments;
}

// --- Chart records as observation groups -------------------------------------------------------------------

/** Where an encounter's group is written and how its identifiers are named. */
export interface EncounterGroupOptions {
  namespaces: IdentifierNamespaces;
  inputPath: string;
}

/**
 * The encounter as one group (the ORU style of the encounter, beside PV1/PV2 which carry the visit): OBR-3
 * the visit number (= PV1-19), OBR-4 `ENCOUNTER^Encounter^L`, OBR-7 admit, OBR-8 discharge; one CE OBX per
 * diagnosis (OBX-4 numbering them). OBR-25 and every OBX-11 are `F` (final) once the encounter has been
 * discharged and `P` (preliminary) while it is open. The encounter's orders are groups of their own
 * ({@link encounterOrderGroups}); the patient summary, where no PV1/PV2 carries the visit, writes
 * {@link encounterSummaryGroup}.
 */
export function encounterObservationGroup(encounter: Encounter, options: EncounterGroupOptions): ObservationGroup {
  const group = encounterGroupHead(encounter, options);
  addDiagnosisObservations(group, encounter, options.inputPath);
  return group;
}

/**
 * The encounter's group in the patient summary as one ORU, where no PV1/PV2 carries the visit:
 * {@link encounterObservationGroup} with class (CE, table 0004), location (ST), attending (XCN) and admit
 * reason (ST/TX) as OBX segments before the diagnoses. A function of its own so that the encounter export,
 * which never writes these, does not bundle them.
 */
export function encounterSummaryGroup(encounter: Encounter, options: EncounterGroupOptions): ObservationGroup {
  const { inputPath, namespaces } = options;
  const group = encounterGroupHead(encounter, options);
  const status = encounterStatus(encounter);
  group.add(
    makeObservation(LOCAL_CODES.patientClass, codedObservationValue(patientClassCodedValue(encounter, `${inputPath}.patientClass`)), status, inputPath),
  );
  if (encounter.location) {
    group.add(makeObservation(LOCAL_CODES.location, textObservationValue(encounter.location), status, inputPath));
  }
  if (encounter.attending) {
    group.add(makeObservation(LOCAL_CODES.attending, clinicianObservationValue(encounter.attending, namespaces), status, inputPath));
  }
  if (encounter.reason) {
    group.add(makeObservation(LOCAL_CODES.admitReason, textObservationValue(encounter.reason), status, inputPath));
  }
  addDiagnosisObservations(group, encounter, inputPath);
  return group;
}

const encounterStatus = (encounter: Encounter): 'F' | 'P' => (encounter.dischargeAt ? 'F' : 'P');

/** The encounter group's OBR: visit number, admit / discharge times, status. */
function encounterGroupHead(encounter: Encounter, options: EncounterGroupOptions): ObservationGroup {
  const { inputPath, namespaces } = options;
  return new ObservationGroup({
    // the encounter's one external id (issue 27 item 5): the visit number exactly as PV1-19 writes it (CX-1
    // length and short form, the visit namespace), so OBR-3 and PV1-19 (and FHIR Encounter.identifier) agree
    fillerOrderNumber: encounter.encounterId,
    fillerOrderNumberLength: IDENTIFIER_LENGTH.cx,
    fillerNamespace: namespaces.visit,
    serviceIdentifier: LOCAL_CODES.encounter,
    observedAt: chartTimeAsWritten(encounter.admitAt, `${inputPath}.admitAt`),
    observationEndAt: chartTimeAsWritten(encounter.dischargeAt, `${inputPath}.dischargeAt`),
    resultStatus: encounterStatus(encounter),
    inputPath,
  });
}

/** One CE OBX per diagnosis, OBX-4 numbering them. */
function addDiagnosisObservations(group: ObservationGroup, encounter: Encounter, inputPath: string): void {
  const status = encounterStatus(encounter);
  (encounter.diagnoses ?? []).forEach((diagnosis, index) => {
    const path = `${inputPath}.diagnoses[${index}]`;
    requireComponents(ceFromCodedValue(diagnosis), path);
    group.add(makeObservation(LOCAL_CODES.diagnosis, codedObservationValue(diagnosis), status, path, { subId: String(index + 1) }));
  });
}

/** ORC-5 (table 0038) and OBR-25 (table 0123) of an order sent without results: one pair, never contradicting. */
export interface PendingOrderStatus {
  orderStatus?: string;
  resultStatus: ResultStatus;
}

/**
 * ORC-5 and OBR-25 of an order the chart holds no results for (issue 27 item 7: the two agree, and
 * neither promises observations that do not follow):
 * - cancelled `CA` / discontinued `DC` / replaced `RP` / error `ER`: OBR-25 `X` (no results, order cancelled);
 * - scheduled `SC`: OBR-25 `S` (procedure scheduled, not done);
 * - in progress `IP`, some results `A`, and completed `CM`: ORC-5 `IP` with OBR-25 `I` (specimen received,
 *   procedure incomplete). The chart holds no results of the order: a `CM` beside an OBR without OBX
 *   told a receiver the order was resulted while no result came; the results, when they come, arrive
 *   as lab results of their own;
 * - on hold `HD`: OBR-25 `O` (order received, not yet performed);
 * - unknown: no ORC-5, OBR-25 `O`.
 */
export function pendingOrderStatus(orderStatus: string | undefined): PendingOrderStatus {
  const code = orderStatusCode(orderStatus);
  switch (code) {
    case 'CA':
    case 'DC':
    case 'RP':
    case 'ER':
      return { orderStatus: code, resultStatus: 'X' };
    case 'SC':
      return { orderStatus: code, resultStatus: 'S' };
    case 'IP':
    case 'A':
    case 'CM':
      return { orderStatus: 'IP', resultStatus: 'I' };
    case 'HD':
      return { orderStatus: code, resultStatus: 'O' };
    default:
      return { resultStatus: 'O' };
  }
}

/** OBR-25 of an order the chart holds no results for ({@link pendingOrderStatus}). */
export function pendingOrderResultStatus(orderStatus: string | undefined): ResultStatus {
  return pendingOrderStatus(orderStatus).resultStatus;
}

/**
 * An order without results as its own group: ORC-1 `SC` (table 0119 status changed: no observations
 * follow, unlike `RE`), ORC-2 and OBR-2 the order id, ORC-5 and OBR-25 from {@link pendingOrderStatus},
 * ORC-9 and OBR-6 the order time, ORC-12 and OBR-16 the ordering provider, OBR-4 the order code, OBR-7
 * the order time (the encounter's admit time when the order has none).
 */
export function pendingOrderGroup(order: EncounterOrder, fallback: { time: string; path: string }, inputPath: string): ObservationGroup {
  requireFirstComponent([escapeText(order.orderId)], inputPath, '.orderId');
  const status = pendingOrderStatus(order.status);
  return new ObservationGroup(
    {
      placerOrderNumber: order.orderId,
      serviceIdentifier: order.code,
      requestedAt: chartTimeAsWritten(order.orderedAt, `${inputPath}.orderedAt`),
      // a bad time is reported where it is: the order's orderedAt, else the fallback's own path (the encounter's admitAt)
      observedAt:
        order.orderedAt !== undefined ? chartTimeAsWritten(order.orderedAt, `${inputPath}.orderedAt`) : chartTimeAsWritten(fallback.time, fallback.path),
      orderingProvider: order.orderingProvider,
      resultStatus: status.resultStatus,
      inputPath,
    },
    {
      orderControl: ORDER_CONTROL_STATUS_CHANGED,
      placerOrderNumber: order.orderId,
      orderStatus: status.orderStatus,
      transactionAt: order.orderedAt,
      orderingProvider: order.orderingProvider,
      inputPath,
    },
  );
}

/** One {@link pendingOrderGroup} per encounter order (the chart holds no results of orders). */
export function encounterOrderGroups(encounter: Encounter, inputPath: string): ObservationGroup[] {
  return (encounter.orders ?? []).map((order, index) =>
    pendingOrderGroup(order, { time: encounter.admitAt, path: `${inputPath}.admitAt` }, `${inputPath}.orders[${index}]`),
  );
}

/**
 * Length of the note's document number (TXA-12, and OBR-3 of the note's group, so that the note has
 * the same key in MDM and ORU): TXA-12 is 30 characters in all, the namespace and `^` included.
 */
export function documentNumberLength(namespaces: IdentifierNamespaces): number {
  // the namespace as written (escaped: a delimiter takes three characters)
  return Math.max(8, Math.min(IDENTIFIER_LENGTH.ei, IDENTIFIER_LENGTH.documentNumber - 1 - escapeText(namespaces.entity).length));
}

/**
 * The note as one group: OBR-3 the note's document number (as TXA-12 of its MDM), OBR-4
 * `NOTE^ChartNote^L`, OBR-7 created at, OBR-25 `F`; one TX OBX with the text (one repetition per
 * line), OBX-14 created at, OBX-16 the author.
 */
export function noteObservationGroup(note: Note, namespaces: IdentifierNamespaces, inputPath: string): ObservationGroup {
  const createdAt = chartTimeAsWritten(note.createdAt, `${inputPath}.createdAt`);
  return new ObservationGroup({
    fillerOrderNumber: note.noteId,
    fillerOrderNumberLength: documentNumberLength(namespaces),
    serviceIdentifier: LOCAL_CODES.note,
    observedAt: createdAt,
    resultStatus: 'F',
    inputPath,
  }).add(
    makeObservation(LOCAL_CODES.note, textLinesObservationValue(note.text), 'F', inputPath, {
      observedAt: createdAt,
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
 * OBR-25 `F`. One OBX per item: NM (numeric), ST or TX (text; TX when multi-line or long), CE (coded);
 * OBX-6 the item's units. Then the total as NM and the interpretation as ST/TX (local codes TOTAL and
 * INTERPRETATION). Every OBX: OBX-11 `F`, OBX-14 performed at, OBX-16 the performer.
 */
export function assessmentObservationGroup(assessment: Assessment, inputPath: string): ObservationGroup {
  // one object for every row: OBX-14 of a row with the same time as the row before is copied
  const performedAt = chartTimeAsWritten(assessment.performedAt, `${inputPath}.performedAt`);
  const performed: ObservationDetails = { observedAt: performedAt, responsibleObserver: assessment.performer };
  const group = new ObservationGroup({
    fillerOrderNumber: assessment.assessmentId,
    serviceIdentifier: assessment.code,
    observedAt: performedAt,
    resultStatus: 'F',
    inputPath,
  });
  assessment.items.forEach((item, index) => {
    const details: ObservationDetails = { observedAt: performedAt, responsibleObserver: assessment.performer, units: item.units };
    group.add(makeObservation(item.code, assessmentItemValue(item), 'F', `${inputPath}.items[${index}]`, details));
  });
  if (assessment.total !== undefined) {
    group.add(makeObservation(LOCAL_CODES.assessmentTotal, numericObservationValue(assessment.total), 'F', `${inputPath}.total`, performed));
  }
  if (assessment.interpretation) {
    group.add(
      makeObservation(LOCAL_CODES.assessmentInterpretation, textObservationValue(assessment.interpretation), 'F', `${inputPath}.interpretation`, performed),
    );
  }
  return group;
}

/** Lab status -> OBX-11 (table 0085) and OBR-25 (table 0123). Amended is a correction in both tables. */
const LAB_STATUS: Record<LabResultSummary['status'], { observation: ObservationResultStatus; request: ResultStatus }> = {
  preliminary: { observation: 'P', request: 'P' },
  final: { observation: 'F', request: 'F' },
  corrected: { observation: 'C', request: 'C' },
  amended: { observation: 'C', request: 'C' },
  cancelled: { observation: 'X', request: 'X' },
};

/** Longest local code (CE-1) written for a test without a code. */
const LOCAL_TEST_CODE_LENGTH = 20;

/**
 * OBX-3 of a lab test: `CODE^Test name^SYSTEM` when the lab sent a code (system `L` when it named
 * none), else a local code made from the test name (upper case, each run of other characters than
 * letters and digits one `-`, in its short form of at most 20 characters: identifiers.ts) with system `L`.
 */
export function labTestIdentifier(test: Pick<LabTestSummary, 'testName' | 'code' | 'codeSystem' | 'testNameFrom'>): CodedValue {
  if (typeof test.code === 'string' && test.code.trim() !== '') {
    // `testNameFrom: 'code'`: the lab sent no name (`code^^LN`), so none is written
    return { code: test.code.trim(), display: test.testNameFrom === 'code' ? undefined : test.testName, system: test.codeSystem?.trim() || 'L' };
  }
  const name = typeof test.testName === 'string' ? test.testName : '';
  const local = name
    .toUpperCase()
    .replace(/[^A-Z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return { code: shortIdentifier(local || name || 'TEST', LOCAL_TEST_CODE_LENGTH), display: name, system: 'L' };
}

/** No primary code (OBX-3.1-3 empty): a test the lab identified by its alternate code only. */
const NO_PRIMARY_CODE: CodedValue = { code: '' };

/** OBX-3.1-3 of a lab test: {@link labTestIdentifier}, or empty when the lab sent only the alternate code ({@link hasAlternateCodeOnly}). */
export function labTestObservationIdentifier(test: LabTestSummary): CodedValue {
  return hasAlternateCodeOnly(test) ? NO_PRIMARY_CODE : labTestIdentifier(test);
}

/** A comment row of a lab result: a test without a code whose name says it is a comment or a note. */
const COMMENT_TEST_NAME = /\b(?:comments?|notes?|remarks?)\s*$/i;

function isCommentRow(test: LabTestSummary): boolean {
  return (
    !(typeof test.code === 'string' && test.code.trim() !== '') &&
    typeof test.testName === 'string' &&
    COMMENT_TEST_NAME.test(test.testName) &&
    !isNumericText(test.result)
  );
}

/** True for a string with something other than white space. */
function hasText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

/**
 * OBX-2 / OBX-5 of a lab test (issue 27): the typed value the lab sent when there is one, else the
 * value inferred from the text as before ({@link numericObservationValue}). A cancelled observation
 * (OBX-11 `X`, result cannot be obtained) carries no value.
 * - NM with `numericValue`: the number as the lab wrote it (precision kept);
 * - SN with `structuredNumeric`: `comparator^value1^separator^value2`;
 * - CWE / CE with `codedValue`: written CE (v2.5.1 table 0125 has no CWE) `code^text^system`;
 * - TX / FT with `textLines`: one repetition per line; ST as text;
 * - any other value type (DT, TS, ED, RP...): the text inferred as before.
 */
export function labTestObservationValue(test: LabTestSummary, status: ObservationResultStatus): ObservationValue {
  const valueType = typeof test.valueType === 'string' ? test.valueType.trim().toUpperCase() : '';
  if (status === 'X') {
    const written: ObservationValueType = valueType === 'CWE' ? 'CE' : ((['NM', 'SN', 'ST', 'TX', 'FT', 'CE'] as const).find((t) => t === valueType) ?? 'ST');
    return { valueType: written, value: escapeText('') };
  }
  switch (valueType) {
    case 'NM':
      if (hasText(test.numericValue) && isNumericText(test.numericValue.trim())) {
        return { valueType: 'NM', value: escapeText(test.numericValue.trim()) };
      }
      break;
    case 'SN': {
      const sn = test.structuredNumeric;
      if (sn && (hasText(sn.value1) || hasText(sn.value2))) {
        return {
          valueType: 'SN',
          value: [escapeText(sn.comparator ?? ''), escapeText(sn.value1 ?? ''), escapeText(sn.separator ?? ''), escapeText(sn.value2 ?? '')],
        };
      }
      break;
    }
    case 'CWE':
    case 'CE': {
      const coded = test.codedValue;
      if (coded && (hasText(coded.code) || hasText(coded.display))) {
        // CE (v2.5.1 table 0125 has no CWE: the same components) with the alternate coding (CWE-4..6) as sent
        return { valueType: 'CE', value: ceWithAlternate({ code: coded.code ?? '', display: coded.display, system: coded.system }, test.codedValueAlternate) };
      }
      break;
    }
    case 'TX':
    case 'FT':
      if (Array.isArray(test.textLines) && test.textLines.some(hasText)) {
        const lines = test.textLines.flatMap((line) => escapeTextLines(typeof line === 'string' ? line : ''));
        return { valueType, value: { lines } };
      }
      // a text sent empty (a pending or cancelled test) stays a text
      if (!hasText(test.result)) return { valueType, value: escapeText('') };
      break;
    case 'ST':
      if (hasText(test.result)) {
        return textObservationValue(test.result);
      }
      break;
    case 'DT':
    case 'TM':
    case 'DTM':
    case 'TS':
      // a date or time value written back as one (not as a number: `20240101` is a date); DTM as TS (TS-1 is a DTM:
      // v2.5.1 table 0125 has no DTM)
      if (hasText(test.result) && HL7_TIME_TEXT[valueType].test(test.result.trim())) {
        return { valueType: valueType === 'DTM' ? 'TS' : valueType, value: escapeText(test.result.trim()) };
      }
      break;
    default:
      break;
  }
  return numericObservationValue(test.result);
}

/** An HL7 DT / TM / DTM (TS-1) value as v2.5.1 writes it: the value types a lab's date or time keeps. */
const HL7_TIME_TEXT: Readonly<Record<'DT' | 'TM' | 'DTM' | 'TS', RegExp>> = {
  DT: /^\d{4}(\d{2}(\d{2})?)?$/,
  TM: /^\d{2}(\d{2}(\d{2}(\.\d{1,4})?)?)?([+-]\d{4})?$/,
  DTM: /^\d{4}(\d{2}(\d{2}(\d{2}(\d{2}(\d{2}(\.\d{1,4})?)?)?)?)?)?([+-]\d{4})?$/,
  TS: /^\d{4}(\d{2}(\d{2}(\d{2}(\d{2}(\d{2}(\.\d{1,4})?)?)?)?)?)?([+-]\d{4})?$/,
};

/** Code of a report's OBX-3 (`REPORT^<report name>^L`), in the single-result export and the summary. */
export const LAB_REPORT_CODE = 'REPORT';

/** Table 0191 type of data of a MIME type: IM image/*, AU audio/*, TEXT text/*, else AP. */
export function typeOfData(mime: string): string {
  const major = mime.split('/')[0]!.trim().toLowerCase();
  return major === 'image' ? 'IM' : major === 'audio' ? 'AU' : major === 'text' ? 'TEXT' : 'AP';
}

/** The MIME subtype in capitals (application/pdf -> PDF), as ED-3 / RP-4. */
export function dataSubtype(mime: string): string {
  const minor = (mime.split('/')[1] ?? '').split(';')[0]!.trim();
  return minor
    .replace(/[^A-Za-z0-9.+-]/g, '')
    .slice(0, 32)
    .toUpperCase();
}

/** Where a report too large for the summary is whole: the single-result export of its result (RP-1, FHIR presentedForm.url). */
export function labReportLocation(resultId: string): string {
  return `/exportHl7LabResult?resultId=${encodeURIComponent(resultId)}`;
}

/**
 * OBX-2 / OBX-5 of a report: base64 data as ED `^<type of data>^<subtype>^Base64^<data>`, other text as
 * TX (line breaks `\.br\`), exactly as the single-result export writes it; a report the summary holds
 * without its data (larger than 16 KiB) as RP `<location>^^<type of data>^<subtype>`, the location
 * {@link labReportLocation} (the single-result export, where it is whole).
 */
export function labReportObservationValue(report: Pick<LabDocumentSummary, 'type' | 'source' | 'data'>, resultId: string, inputPath: string): ObservationValue {
  const type = typeof report.type === 'string' ? report.type : '';
  if (typeof report.data !== 'string') {
    return { valueType: 'RP', value: [escapeText(labReportLocation(resultId)), escapeText(''), escapeText(typeOfData(type)), escapeText(dataSubtype(type))] };
  }
  if (typeof report.source === 'string' && report.source.toLowerCase() === 'base64') {
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(report.data)) {
      throw new Hl7EncodingError(`${inputPath}.data`, 'is not base64');
    }
    return {
      valueType: 'ED',
      value: [escapeText(''), escapeText(typeOfData(type)), escapeText(dataSubtype(type)), escapeText('Base64'), escapeText(report.data)],
    };
  }
  return { valueType: 'TX', value: escapeFormattedText(report.data) };
}

/** OBX-3.4-6 of a lab test: its alternate code, when the lab sent one. */
/**
 * OBX-7 of a test: its reference range as sent, when that range is in OBX-6's units. v2.5.1 OBX-7 is a
 * string read in OBX-6's units and has no units of its own: a range whose bounds the lab gave in other
 * units (results[].referenceRangeUnits / referenceRangeUnitsCode) is left out (a receiver would read
 * `3.9-5.5` mmol/L as mg/dL); it lives in the FHIR export (referenceRange low / high with their units).
 */
function labTestReferenceRange(
  test: Pick<LabTestSummary, 'referenceRange' | 'referenceRangeUnits' | 'referenceRangeUnitsCode' | 'units' | 'unitsCode'>,
): string | undefined {
  const trimmed = (value: unknown) => (hasText(value) ? value.trim() : undefined);
  const rangeUnits = trimmed(test.referenceRangeUnits);
  const rangeCode = trimmed(test.referenceRangeUnitsCode);
  if (rangeUnits === undefined && rangeCode === undefined) return test.referenceRange;
  const valueCode = trimmed(test.unitsCode);
  const sameUnits =
    rangeCode !== undefined && valueCode !== undefined ? rangeCode === valueCode : (rangeUnits ?? rangeCode) === (trimmed(test.units) ?? valueCode);
  return sameUnits ? test.referenceRange : undefined;
}

function labTestAlternate(test: LabTestSummary): CodedValue | undefined {
  const alternate = test.alternateCode;
  return alternate && (hasText(alternate.code) || hasText(alternate.display))
    ? { code: alternate.code ?? '', display: alternate.display, system: alternate.system }
    : undefined;
}

/**
 * A lab result as one group. OBR:
 * - OBR-2 the lab's placer order number with its namespace (`order.placerOrderNumber`), else the result
 *   id with the entity namespace; OBR-3 the accession number with the lab's namespace
 *   (`order.accessionNamespace`), else the sender id, else the entity namespace (both EI short forms);
 * - OBR-4 the universal service (`order.universalService`), else `LAB^Laboratory result^L`;
 * - OBR-7 the collection time (`order.collectedAt`, else the specimen's, precision kept), else resulted
 *   at; OBR-22 resulted at (`order.reportedAt` as the lab wrote it, else `resultedAt`); OBR-16 the ordering provider (XCN-9 the sender: the id is the lab's);
 * - OBR-25 `order.orderStatus` when it is a table 0123 value, else from the status;
 * - NTE after the OBR: the order's comments, then the comment rows of older records (a test without a
 *   code named "... comment", "... note" or "... remark", written `Name: text`).
 * One OBX per other test: OBX-3 {@link labTestIdentifier} with the alternate code in OBX-3.4-6, OBX-2 /
 * OBX-5 {@link labTestObservationValue}, OBX-6 `unitsCode^units^UCUM` (or the units as sent), OBX-7
 * reference range, OBX-8 the abnormal flags (one repetition each), OBX-11 `observationStatus` when it is a
 * table 0085 value, else from the status; OBX-14 observed at (precision kept), else resulted at; OBX-23
 * the performing organization, else the report's first performer name (`order.performer`), else the sender id; NTE after the OBX: the test's comments. SPM after the
 * observations when the specimen type is known.
 */
export function labResultObservationGroup(lab: LabResultSummary, inputPath: string): ObservationGroup {
  const status = Object.prototype.hasOwnProperty.call(LAB_STATUS, lab.status) ? LAB_STATUS[lab.status] : undefined;
  if (!status) {
    throw new Hl7EncodingError(`${inputPath}.status`, 'is not a known lab result status');
  }
  const order = lab.order ?? {};
  const commentRows = lab.results.filter(isCommentRow).map((test) => `${test.testName}: ${test.result}`);
  const orderComments = (Array.isArray(order.comments) ? order.comments : []).filter(hasText);
  const placer = order.placerOrderNumber && hasText(order.placerOrderNumber.id) ? order.placerOrderNumber : undefined;
  const service =
    order.universalService && (hasText(order.universalService.code) || hasText(order.universalService.display)) ? order.universalService : undefined;
  const collectedAt = hasText(order.collectedAt) ? order.collectedAt : hasText(order.specimen?.collectedAt) ? order.specimen.collectedAt : undefined;
  // OBR-22 as the lab wrote it (offset and precision kept), else resulted at as sent (UTC, its fraction kept: DTM takes 4 digits)
  const reportedAt: SegmentTime = { asSent: hasText(order.reportedAt) ? order.reportedAt : lab.resultedAt };
  // v2.5.1 has no report-level performer (PRT is v2.7): the report's first performer name is OBX-23 of a test without its own
  const reportPerformer = (Array.isArray(order.performer) ? order.performer : []).find((performer) => hasText(performer?.name));
  const group = new ObservationGroup({
    placerOrderNumber: placer ? placer.id : lab.resultId,
    placerNamespace: placer?.namespace,
    fillerOrderNumber: lab.accessionNumber,
    // the accession number is the lab's: its namespace is the one the lab sent, else the sender (never the chart's:
    // two labs' identical accession numbers must not collide)
    fillerNamespace: hasText(order.accessionNamespace) ? order.accessionNamespace : hasText(lab.senderId) ? lab.senderId : undefined,
    serviceIdentifier: service ? { code: service.code ?? '', display: service.display, system: service.system } : LOCAL_CODES.labResult,
    observedAt: collectedAt ? { asSent: collectedAt } : reportedAt,
    // OBR-8 ends the period OBR-7 starts: only with the order's own collection start (as FHIR's Period)
    observationEndAt: hasText(order.collectedAt) && hasText(order.collectedEndAt) ? { asSent: order.collectedEndAt } : undefined,
    orderingProvider: order.orderingProvider,
    // the lab's clinician id was assigned in the lab's context, not the chart's clinician namespace (HD-1: 20 characters)
    orderingProviderAuthority: hasText(lab.senderId) ? lab.senderId.slice(0, HD_NAMESPACE_LENGTH) : undefined,
    statusChangedAt: reportedAt,
    resultStatus: resultStatus(order.orderStatus) ?? status.request,
    comments: [...orderComments, ...commentRows],
    specimen: order.specimen,
    inputPath,
  });
  lab.results.forEach((result, index) => {
    if (isCommentRow(result)) {
      return;
    }
    const observationStatus = observationResultStatus(result.observationStatus) ?? status.observation;
    const path = `${inputPath}.results[${index}]`;
    group.add(
      makeObservation(labTestObservationIdentifier(result), labTestObservationValue(result, observationStatus), observationStatus, `${path}.testName`, {
        alternateIdentifier: labTestAlternate(result),
        // OBX-4 as sent (a sub-id the lab gave; the others are numbered when their OBX-3 repeats)
        subId: hasText(result.subId) ? result.subId.trim() : undefined,
        units: result.units,
        unitsCode: hasText(result.unitsCode) ? result.unitsCode.trim() : undefined,
        referenceRange: labTestReferenceRange(result),
        abnormalFlags: Array.isArray(result.abnormalFlags) ? result.abnormalFlags.filter(hasText).map((flag) => flag.trim()) : undefined,
        // OBX-14 is the physiologically relevant time: for a specimen, its collection (OBR-7), as FHIR effective[x] reads it
        observedAt: hasText(result.observedAt) ? { asSent: result.observedAt } : collectedAt ? { asSent: collectedAt } : reportedAt,
        analyzedAt: hasText(result.analyzedAt) ? { asSent: result.analyzedAt } : undefined,
        ...performingOrganizationOf(result, reportPerformer, lab.senderId),
        comments: Array.isArray(result.comments) ? result.comments.filter(hasText) : undefined,
      }),
    );
  });
  // the reports after the tests (issue 27 K6: the summary carries every document, as the single-result export does)
  (Array.isArray(lab.documents) ? lab.documents : []).forEach((document, index) => {
    const path = `${inputPath}.documents[${index}]`;
    group.add(
      makeObservation(
        { code: LAB_REPORT_CODE, display: document.name, system: 'L' },
        labReportObservationValue(document, lab.resultId, path),
        status.observation,
        `${path}.name`,
        { subId: String(index + 1) },
      ),
    );
  });
  return group;
}

/**
 * OBX-23/24/25 of a lab test: its own performing organization (name, identifier), address and director as
 * sent; a test naming no organization of its own gets the report's first named performer (name and
 * identifier: v2.5.1 has no report-level performer), else the sender id by name.
 */
function performingOrganizationOf(
  result: LabTestSummary,
  reportPerformer: LabPerformer | undefined,
  senderId: string | undefined,
): Pick<
  ObservationDetails,
  | 'performingOrganization'
  | 'performingOrganizationIdentifier'
  | 'performingOrganizationAddress'
  | 'performingOrganizationDirector'
  | 'writePerformingOrganization'
> {
  const own = hasText(result.performingOrganization) || hasText(result.performingOrganizationIdentifier?.id);
  const reportIdentifier = reportPerformer?.identifier && hasText(reportPerformer.identifier.id) ? reportPerformer.identifier : undefined;
  return {
    performingOrganization: own ? result.performingOrganization : (reportPerformer?.name ?? senderId),
    performingOrganizationIdentifier: own ? result.performingOrganizationIdentifier : reportIdentifier,
    performingOrganizationAddress: isPlainObject(result.performingOrganizationAddress) ? result.performingOrganizationAddress : undefined,
    performingOrganizationDirector: isPlainObject(result.performingOrganizationDirector) ? result.performingOrganizationDirector : undefined,
    writePerformingOrganization: setPerformingOrganizationFields,
  };
}

const isPlainObject = <T>(value: T | undefined): value is T => typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * ORU_R01 requires at least one ORDER_OBSERVATION group with its OBR. A patient with nothing to report
 * gets a single OBR, OBR-4 `NO_RECORDS^No chart records^L`, OBR-7 the message time, OBR-25 `F` (the
 * statement "nothing to report" is final), no OBX, and an NTE saying so.
 */
export function noRecordsObservationGroup(messageTime: Date): ObservationGroup {
  return new ObservationGroup({
    serviceIdentifier: LOCAL_CODES.noRecords,
    observedAt: messageTime,
    resultStatus: 'F',
    comments: ['The chart holds no records for this patient.'],
    inputPath: 'records',
  });
}

export { ORDER_CONTROL_RESULTS };
