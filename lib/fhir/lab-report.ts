/**
 * A lab result (the decrypted summary the HL7 patient summary also reads, lib/chart/types.ts
 * LabResultSummary) as a DiagnosticReport with its Observations contained (one per test), so one
 * read returns the report and its results; per R4 and the US Core Laboratory Result Observation and
 * DiagnosticReport (Lab) profiles (issue 27). Every field of the lab model is optional: a record
 * without them gives the elements it always gave, with the fixes issue 27 names (codes and
 * identifiers with a system, effective[x], comments as notes).
 *
 * DiagnosticReport
 *   identifier    accession (type ACSN, system {@link accessionSystem}: the sender and the lab's
 *                 namespace); the placer order number (type PLAC) when sent
 *   basedOn       a contained ServiceRequest `#order` when the lab sent order facts or comments:
 *                 identifier PLAC, code = universal service, requester = ordering provider, note =
 *                 the order's comments (and the comment rows of older records), specimen
 *   status        preliminary | final | corrected | amended | cancelled (same words in both)
 *   category      v2-0074 LAB
 *   code          the universal service (OBR-4) coded; else the local `LAB` "Laboratory result"
 *   effective     the collection time (order, else specimen; precision kept), else resulted at; a
 *                 collection with an end (OBR-8) is effectivePeriod
 *   issued        resulted at as the lab wrote it (order.reportedAt, offset kept), else as stored (UTC);
 *                 performer: the lab's performers as sent (order.performer: display, identifier), else the sender (display)
 *   specimen      a contained Specimen `#specimen` (type, collection time, the lab's id)
 * Observation (one per test; comment rows of older records are notes, never Observations)
 *   status        OBX-11 per the v2-to-FHIR map (F final, P/R/S preliminary, C corrected, A/B amended,
 *                 W/D entered-in-error, X/N cancelled, I/O registered, U/V final), else the report's
 *   category      laboratory;  code: the test code with its system (LN -> http://loinc.org, SCT, local
 *                 codes in a system of the sender) + the alternate code, text = test name; a code
 *                 sent without display keeps none (testNameFrom `code`: no text either; `text`: text only);
 *                 a display sent beside a different text keeps both (codeDisplay)
 *   effective     observed at, else the collection time, else resulted at (precision kept); with an end
 *                 (observedEndAt) effectivePeriod
 *   issued        the test's own (reportedAt, as sent) when it has a time of day, else the report's
 *   value[x]      NM -> valueQuantity (UCUM system/code when unitsCode); SN -> valueQuantity with its
 *                 comparator, valueRange (`-`), valueRatio (`:` `/`); CWE/CE -> valueCodeableConcept;
 *                 TX/FT -> valueString (lines joined by LF); otherwise as before: a Quantity when the
 *                 result is a plain decimal whose JSON number prints back identically, else valueString.
 *                 A cancelled observation carries no value (dataAbsentReason not-performed).
 *   interpretation  the abnormal flags (v3-ObservationInterpretation, same codes as table 0078)
 *   referenceRange  text, and low/high when it is `low-high` (in referenceRangeUnits / referenceRangeUnitsCode when sent, else the value's);  performer: performing organization,
 *                 else the report's first performer name, else the sender;  specimen: `#specimen`;  note: the test's comments
 */
import type {
  Attachment,
  CodeableConcept,
  Coding,
  DiagnosticReport,
  Extension,
  Identifier,
  Observation,
  Organization,
  ObservationReferenceRange,
  Quantity,
  Reference,
  ServiceRequest,
  Specimen,
} from '@medplum/fhirtypes';
import type { AssignedIdentifier, LabOrder, LabPerformer, LabResultSummary, LabTestSummary, SentAge, SentConcept } from '../chart/types';
import { hasAlternateCodeOnly } from '../chart/types';
import { clinicianReference, patientReference, type ClinicianAndOrderIds } from './chart-resources';
import { logicalId } from './logical-id';
import { numericValue } from './numeric';
import { Systems, systemUri } from './terminology';
import { fhirCode, fhirString, nonEmpty, present } from './text';

/** What the service knows of a lab result when exporting it (structurally the stored summary). */
export interface LabResultRecord extends LabResultSummary {
  /** long values or results beyond the summary budget were left out */
  truncated?: boolean;
}

export const US_CORE_LAB = {
  observation: 'http://hl7.org/fhir/us/core/StructureDefinition/us-core-observation-lab',
  diagnosticReport: 'http://hl7.org/fhir/us/core/StructureDefinition/us-core-diagnosticreport-lab',
} as const;

const INTERPRETATION_SYSTEM = 'http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation';
const DATA_ABSENT_REASON_SYSTEM = 'http://terminology.hl7.org/CodeSystem/data-absent-reason';
/** R4 core extension: the number of decimal places a decimal was written with (`6.90` -> 2). */
const QUANTITY_PRECISION = 'http://hl7.org/fhir/StructureDefinition/quantity-precision';
/** The chart's own local codes (`LAB` when the lab sent no universal service). */
export const CHART_LOCAL_CODE_SYSTEM = 'urn:interop:local-code';

/** Table 0078 flags (= v3-ObservationInterpretation codes) with their displays. */
const INTERPRETATION_DISPLAY: Record<string, string> = {
  L: 'Low',
  H: 'High',
  LL: 'Critical low',
  HH: 'Critical high',
  LU: 'Significantly low',
  HU: 'Significantly high',
  '<': 'Off scale low',
  '>': 'Off scale high',
  N: 'Normal',
  A: 'Abnormal',
  AA: 'Critical abnormal',
  U: 'Significant change up',
  D: 'Significant change down',
  B: 'Better',
  W: 'Worse',
  S: 'Susceptible',
  R: 'Resistant',
  I: 'Intermediate',
  MS: 'moderately susceptible',
  VS: 'very susceptible',
  POS: 'Positive',
  NEG: 'Negative',
  IND: 'Indeterminate',
  DET: 'Detected',
  ND: 'Not detected',
  AC: 'Anti-complementary substances present',
  RR: 'Reactive',
  QCF: 'Quality control failure',
  TOX: 'Cytotoxic substance present',
  NR: 'Non-reactive',
  EX: 'outside threshold',
  HX: 'above high threshold',
  LX: 'below low threshold',
  CAR: 'Carrier',
  NCAR: 'Not a carrier',
  'SYN-R': 'Synergy - resistant',
  'SYN-S': 'Synergy - susceptible',
};

type ObservationStatus = Observation['status'];

/** OBX-11 (table 0085, and the later A, B, V) -> Observation.status, per the v2-to-FHIR concept map. */
const OBSERVATION_STATUS: Record<string, ObservationStatus> = {
  F: 'final',
  U: 'final',
  V: 'final',
  P: 'preliminary',
  R: 'preliminary',
  S: 'preliminary',
  C: 'corrected',
  A: 'amended',
  B: 'amended',
  W: 'entered-in-error',
  D: 'entered-in-error',
  X: 'cancelled',
  N: 'cancelled',
  I: 'registered',
  O: 'registered',
};

function hasText(value: unknown): value is string {
  return typeof value === 'string' && value.trim() !== '';
}

function senderOf(lab: LabResultRecord): string {
  return fhirString(lab.senderId) ?? 'unknown';
}

/** A URI naming one of a sender's identifier or code systems: `urn:interop:sender:<sender>:<what>`. */
export function senderSystem(sender: string, what: string): string {
  return `urn:interop:sender:${encodeURIComponent(sender)}:${what}`;
}

/**
 * Identifier system of a lab's accession numbers: one URN per sender and accession namespace
 * (OBR-3.2), so that two labs' identical accession numbers never collide:
 * `urn:interop:sender:<sender>:accession[:<namespace>]`.
 */
export function accessionSystem(lab: LabResultRecord): string {
  const namespace = fhirString(lab.order?.accessionNamespace);
  return senderSystem(senderOf(lab), `accession${namespace ? `:${encodeURIComponent(namespace)}` : ''}`);
}

/** Identifier system of a placer order number (OBR-2) in its namespace, as the sender named it. */
export function placerSystem(lab: LabResultRecord, namespace: string | undefined): string {
  const ns = fhirString(namespace);
  return senderSystem(senderOf(lab), `placer${ns ? `:${encodeURIComponent(ns)}` : ''}`);
}

/**
 * The FHIR system of a coding system a lab named (table 0396): LN, SCT, UCUM... their URIs
 * (terminology.ts); local codes (`L`, `99zzz`, and names without a URI) a system of the sender:
 * `urn:interop:sender:<sender>:code:<name>`.
 */
export function labCodeSystem(lab: LabResultRecord, name: string | undefined): string {
  const known = systemUri(fhirString(name)?.trim());
  return known ?? senderSystem(senderOf(lab), `code:${encodeURIComponent(fhirString(name)?.trim() || 'L')}`);
}

function labCoding(lab: LabResultRecord, code: string | undefined, display: string | undefined, system: string | undefined): Coding | undefined {
  const c = fhirCode(code);
  if (c === undefined) return undefined;
  return { system: labCodeSystem(lab, system), code: c, ...present('display', fhirString(display)) };
}

/**
 * A FHIR dateTime of a time as the sender wrote it, precision kept: `2024`, `2024-11`, `2024-11-07`
 * as they are; a time gets its seconds (FHIR needs them once there are hours and minutes; an hour alone
 * gets `:00` minutes too: FHIR has no hour precision) and keeps
 * its offset (`Z` or `±hh:mm`); a time without an offset (FHIR needs one) is its date.
 */
export function fhirDateTime(value: string | undefined): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = /^(\d{4}(?:-\d{2}(?:-\d{2})?)?)(?:T(\d{2}(?::\d{2})?)(:\d{2}(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/i.exec(value.trim());
  if (!match) return undefined;
  const [, date, time, seconds, zone] = match;
  if (time === undefined) return date;
  if (zone === undefined) return date!.length === 10 ? date : undefined;
  const offset = zone.toUpperCase() === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  // FHIR has no hour precision: an hour the lab wrote alone gets :00 minutes (docs/lab-results.md)
  return `${date}T${time.length === 2 ? `${time}:00` : time}${seconds ?? ':00'}${offset}`;
}

/**
 * `issued` (an instant): the lab's OBR-22 / issued as it wrote it (`order.reportedAt`: its offset kept,
 * seconds added when it stopped at minutes), else resulted at (UTC, as stored). A reported time without a
 * time of day is no instant: resulted at.
 */
function issuedOf(lab: LabResultRecord): string {
  const reported = fhirDateTime(lab.order?.reportedAt);
  return reported !== undefined && reported.includes('T') ? reported : lab.resultedAt;
}

function quantity(value: string, test: LabTestSummary, comparator?: Quantity['comparator']): Quantity | undefined {
  const number = Number(value);
  if (!/^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/.test(value.trim()) || !Number.isFinite(number)) return undefined;
  const unit = fhirString(test.units) ?? fhirString(test.unitsCode);
  const ucum = fhirCode(test.unitsCode);
  const decimals = /\.(\d+)$/.exec(value.trim())?.[1]?.length ?? 0;
  // a value whose JSON number prints differently (`6.90`, `007`) keeps its written precision
  const precision: Extension[] = String(number) === value.trim() ? [] : [{ url: QUANTITY_PRECISION, valueInteger: decimals }];
  return {
    value: number,
    ...(precision.length ? { _value: { extension: precision } } : {}),
    ...present('comparator', comparator),
    ...present('unit', unit),
    ...(ucum ? { system: Systems.ucum, code: ucum } : {}),
  } as Quantity;
}

type ObservationValue = Pick<Observation, 'valueQuantity' | 'valueCodeableConcept' | 'valueString' | 'valueRange' | 'valueRatio'>;

const SN_COMPARATORS: Record<string, Quantity['comparator'] | null> = { '<': '<', '<=': '<=', '>=': '>=', '>': '>', '=': null };
/** As the HL7 exports read a value's text (lib/hl7/observations.ts): a comparator and a number, a ratio. */
const COMPARATOR_TEXT = /^\s*(<=|>=|<|>|=)\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*$/;
const RATIO_TEXT = /^\s*(\d+(?:\.\d*)?)\s*([:/])\s*(\d+(?:\.\d*)?)\s*$/;

/** The typed value of a test (see the table at the top), or the value inferred from its text as before. */
function testValue(lab: LabResultRecord, test: LabTestSummary): ObservationValue {
  const valueType = typeof test.valueType === 'string' ? test.valueType.trim().toUpperCase() : '';
  if (valueType === 'NM' && hasText(test.numericValue)) {
    const q = quantity(test.numericValue, test);
    if (q) return { valueQuantity: q };
  }
  if (valueType === 'SN' && test.structuredNumeric) {
    const sn = test.structuredNumeric;
    const separator = fhirString(sn.separator)?.trim();
    if (!separator && hasText(sn.value1)) {
      const comparator = SN_COMPARATORS[fhirString(sn.comparator)?.trim() ?? '='];
      const q = comparator === undefined ? undefined : quantity(sn.value1, test, comparator ?? undefined);
      if (q) return { valueQuantity: q };
    }
    if (separator === '-' && hasText(sn.value1) && hasText(sn.value2)) {
      const low = quantity(sn.value1, test);
      const high = quantity(sn.value2, test);
      if (low && high) return { valueRange: { low, high } };
    }
    if ((separator === ':' || separator === '/') && hasText(sn.value1) && hasText(sn.value2)) {
      const numerator = quantity(sn.value1, { testName: '', result: '' });
      const denominator = quantity(sn.value2, { testName: '', result: '' });
      if (numerator && denominator) return { valueRatio: { numerator, denominator } };
    }
  }
  if ((valueType === 'CWE' || valueType === 'CE') && test.codedValue) {
    const coding = labCoding(lab, test.codedValue.code, test.codedValue.display, test.codedValue.system);
    // the lab's alternate coding of the value (CWE-4..6, a second coding) after it
    const alternate = test.codedValueAlternate
      ? labCoding(lab, test.codedValueAlternate.code, test.codedValueAlternate.display, test.codedValueAlternate.system)
      : undefined;
    const codings = [coding, alternate].filter((c): c is Coding => c !== undefined);
    // the value's text: what a reader was shown (`result`: FHIR code.text, an HL7 CE's text) unless that is only the code
    const shown = fhirString(test.result);
    const text = shown !== undefined && shown.trim() !== test.codedValue.code ? shown : fhirString(test.codedValue.display);
    if (coding || text) return { valueCodeableConcept: { ...nonEmpty('coding', coding ? codings : []), ...present('text', text) } };
  }
  // an HL7 date or time value (`202402291305-0500`) is no quantity: its text as written
  if ((valueType === 'DT' || valueType === 'TM' || valueType === 'DTM' || valueType === 'TS') && /^\d/.test(test.result ?? '')) {
    return present('valueString', fhirString(test.result));
  }
  if ((valueType === 'TX' || valueType === 'FT') && Array.isArray(test.textLines)) {
    const text = fhirString(test.textLines.join('\n'));
    if (text) return { valueString: text };
  }
  const numeric = numericValue(test.result);
  const unit = fhirString(test.units);
  const ucum = fhirCode(test.unitsCode);
  if (numeric !== undefined) return { valueQuantity: { value: numeric, ...present('unit', unit), ...(ucum ? { system: Systems.ucum, code: ucum } : {}) } };
  // the text forms the HL7 exports write as SN (`<40`, `>= 5`, `1:40`), typed the same way here
  const comparator = typeof test.result === 'string' ? COMPARATOR_TEXT.exec(test.result) : null;
  const mapped = comparator ? SN_COMPARATORS[comparator[1]!] : undefined;
  const compared = comparator && mapped !== undefined ? quantity(comparator[2]!, test, mapped ?? undefined) : undefined;
  if (compared) return { valueQuantity: compared };
  const ratio = typeof test.result === 'string' ? RATIO_TEXT.exec(test.result) : null;
  const numerator = ratio ? quantity(ratio[1]!, { testName: '', result: '' }) : undefined;
  const denominator = ratio ? quantity(ratio[3]!, { testName: '', result: '' }) : undefined;
  if (numerator && denominator) return { valueRatio: { numerator, denominator } };
  return present('valueString', fhirString(test.result));
}

function interpretation(test: LabTestSummary): CodeableConcept[] {
  const flags = Array.isArray(test.abnormalFlags) ? test.abnormalFlags : [];
  return flags
    .map((flag) => fhirCode(flag))
    .filter((flag): flag is string => flag !== undefined)
    .map((flag) => {
      const display = Object.prototype.hasOwnProperty.call(INTERPRETATION_DISPLAY, flag) ? INTERPRETATION_DISPLAY[flag] : undefined;
      return { coding: [{ system: INTERPRETATION_SYSTEM, code: flag, ...present('display', display) }], ...present('text', display) };
    });
}

function referenceRange(test: LabTestSummary): ObservationReferenceRange[] {
  const text = fhirString(test.referenceRange);
  if (text === undefined) return [];
  const bounds = /^\s*([+-]?\d+(?:\.\d+)?)\s*-\s*([+-]?\d+(?:\.\d+)?)\s*$/.exec(text);
  // the bounds in their own units when the lab sent them apart from the value's (either field): unit and code
  // both from the range, none borrowed from the value (a range in mmol/L never gets the value's mg/dL code); else the value's
  const ownUnits = fhirString(test.referenceRangeUnits);
  const ownCode = fhirCode(test.referenceRangeUnitsCode);
  const units = ownUnits !== undefined || ownCode !== undefined ? { ...test, units: ownUnits, unitsCode: ownCode } : test;
  const low = bounds ? quantity(bounds[1]!, units) : undefined;
  const high = bounds ? quantity(bounds[2]!, units) : undefined;
  return [{ ...(low && high ? { low, high } : {}), ...rangeContext(test), text }];
}

/** A concept as the lab sent it (FHIR intake keeps its codings' systems as sent). */
function sentConcept(concept: SentConcept | undefined): CodeableConcept | undefined {
  if (typeof concept !== 'object' || concept === null) return undefined;
  const codings = (Array.isArray(concept.coding) ? concept.coding : [])
    .filter((coding) => fhirCode(coding?.code) !== undefined)
    .map((coding): Coding => ({
      ...present('system', fhirString(coding.system)),
      code: fhirCode(coding.code)!,
      ...present('display', fhirString(coding.display)),
    }));
  const text = fhirString(concept.text);
  return codings.length > 0 || text !== undefined ? { ...nonEmpty('coding', codings), ...present('text', text) } : undefined;
}

/** An age bound as sent: the value (its written precision kept), its unit and UCUM code when sent, nothing borrowed. */
function sentAge(age: SentAge | undefined): Quantity | undefined {
  if (typeof age !== 'object' || age === null || typeof age.value !== 'string') return undefined;
  const code = fhirCode(age.code);
  const value = quantity(age.value, { testName: '', result: '' });
  return value ? { ...value, ...present('unit', fhirString(age.unit)), ...(code ? { system: Systems.ucum, code } : {}) } : undefined;
}

/** referenceRange.type, .appliesTo and .age as the lab sent them (FHIR intake; FHIR only: OBX-7 has no place for them). */
function rangeContext(test: LabTestSummary): Pick<ObservationReferenceRange, 'type' | 'appliesTo' | 'age'> {
  const type = sentConcept(test.referenceRangeType);
  const appliesTo = (Array.isArray(test.referenceRangeAppliesTo) ? test.referenceRangeAppliesTo : [])
    .map(sentConcept)
    .filter((concept): concept is CodeableConcept => concept !== undefined);
  const low = sentAge(test.referenceRangeAge?.low);
  const high = sentAge(test.referenceRangeAge?.high);
  return {
    ...(type ? { type } : {}),
    ...nonEmpty('appliesTo', appliesTo),
    ...(low || high ? { age: { ...(low ? { low } : {}), ...(high ? { high } : {}) } } : {}),
  };
}

/** A comment row of an older record: a test without a code whose name says it is a comment or a note (as the HL7 exports read it). */
const COMMENT_TEST_NAME = /\b(?:comments?|notes?|remarks?)\s*$/i;
const NUMERIC_TEXT = /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/;

export function isLabCommentRow(test: LabTestSummary): boolean {
  return !hasText(test.code) && typeof test.testName === 'string' && COMMENT_TEST_NAME.test(test.testName) && !NUMERIC_TEXT.test(test.result);
}

function notes(comments: readonly unknown[] | undefined): Array<{ text: string }> {
  return (Array.isArray(comments) ? comments : [])
    .map((comment) => fhirString(typeof comment === 'string' ? comment : undefined))
    .filter((text): text is string => text !== undefined)
    .map((text) => ({ text }));
}

const SPECIMEN_ID = 'specimen';
const ORDER_ID = 'order';

function specimenResource(patientId: string, lab: LabResultRecord, order: LabOrder): Specimen | undefined {
  const specimen = order.specimen;
  if (!specimen) return undefined;
  const type = specimen.type ? labCoding(lab, specimen.type.code, specimen.type.display, specimen.type.system) : undefined;
  const collected = fhirDateTime(specimen.collectedAt) ?? fhirDateTime(order.collectedAt);
  const id = fhirString(specimen.id?.id);
  if (!type && !collected && !id) return undefined;
  return {
    resourceType: 'Specimen',
    id: SPECIMEN_ID,
    ...(id
      ? {
          identifier: [
            { system: senderSystem(senderOf(lab), `specimen${specimen.id?.namespace ? `:${encodeURIComponent(specimen.id.namespace)}` : ''}`), value: id },
          ],
        }
      : {}),
    ...(type ? { type: { coding: [type], ...present('text', fhirString(specimen.type?.display)) } } : {}),
    subject: patientReference(patientId),
    ...(collected ? { collection: { collectedDateTime: collected } } : {}),
  };
}

function placerIdentifiers(lab: LabResultRecord, ids: ClinicianAndOrderIds | undefined): Identifier[] {
  const placer = lab.order?.placerOrderNumber;
  const stored = fhirString(placer?.id);
  if (!stored) return [];
  return orderNumberIdentifiers(
    { type: { coding: [{ system: Systems.v2IdentifierType, code: 'PLAC', display: 'Placer Identifier' }] }, system: placerSystem(lab, placer?.namespace) },
    stored,
    ids,
  );
}

/**
 * A placer or accession number: the lab's own value (nothing a lab sent is changed), and when OBR-2 / OBR-3
 * write it in its stable short form (beyond 22 characters, or holding a space or `_`), that form as well, as a
 * `secondary` identifier in the same system: the one string HL7 and FHIR share (issue 27 item 5).
 */
function orderNumberIdentifiers(base: Identifier, stored: string | undefined, ids: ClinicianAndOrderIds | undefined): Identifier[] {
  if (stored === undefined) return [base];
  const hl7 = ids ? ids.orderNumber(stored) : stored;
  if (hl7 === stored) return [{ ...base, value: stored }];
  return [
    { use: 'usual', ...base, value: stored },
    { use: 'secondary', ...base, value: hl7 },
  ];
}

function reportCode(lab: LabResultRecord): CodeableConcept {
  const service = lab.order?.universalService;
  const coding = service ? labCoding(lab, service.code, service.display, service.system) : undefined;
  if (coding) return { coding: [coding], ...present('text', fhirString(service?.display)) };
  return { coding: [{ system: CHART_LOCAL_CODE_SYSTEM, code: 'LAB', display: 'Laboratory result' }], text: 'Laboratory result' };
}

/** OBR-25 (table 0123) -> ServiceRequest.status: results final or corrected -> completed, cancelled -> revoked, else active. */
function orderStatus(lab: LabResultRecord): ServiceRequest['status'] {
  switch (fhirCode(lab.order?.orderStatus)?.toUpperCase()) {
    case 'F':
    case 'C':
      return 'completed';
    case 'X':
      return 'revoked';
    case undefined:
      return lab.status === 'cancelled' ? 'revoked' : lab.status === 'preliminary' ? 'active' : 'completed';
    default:
      return 'active';
  }
}

function orderResource(
  patientId: string,
  lab: LabResultRecord,
  comments: Array<{ text: string }>,
  specimen: Specimen | undefined,
  ids: ClinicianAndOrderIds | undefined,
): ServiceRequest | undefined {
  const order = lab.order ?? {};
  const placer = placerIdentifiers(lab, ids);
  // the lab's clinician id is in the sender's system, never the chart's (its value as OBR-16 XCN-1 writes it)
  const provider = order.orderingProvider ? clinicianReference(order.orderingProvider, ids) : undefined;
  const requester = provider?.identifier ? { ...provider, identifier: { ...provider.identifier, system: senderSystem(senderOf(lab), 'clinician') } } : provider;
  if (placer.length === 0 && !requester && !order.universalService && comments.length === 0) return undefined;
  return {
    resourceType: 'ServiceRequest',
    id: ORDER_ID,
    ...nonEmpty('identifier', placer),
    status: orderStatus(lab),
    intent: 'order',
    category: [{ coding: [{ system: 'http://snomed.info/sct', code: '108252007', display: 'Laboratory procedure' }] }],
    code: reportCode(lab),
    subject: patientReference(patientId),
    ...(requester ? { requester } : {}),
    ...(specimen ? { specimen: [{ reference: `#${SPECIMEN_ID}` }] } : {}),
    ...nonEmpty('note', comments),
  };
}

/**
 * US Core us-core-1: a lab Observation's effectiveDateTime is at least to the day. A time the lab sent
 * coarser than that (`2024-04`, `2024`) keeps its precision as the Period it stands for (start and end
 * the same month or year: inclusive at their precision), which the profile allows; nothing is made up.
 */
function observationEffective(effective: string | undefined): Pick<Observation, 'effectiveDateTime' | 'effectivePeriod'> {
  if (effective === undefined) return {};
  return effective.length >= 10 ? { effectiveDateTime: effective } : { effectivePeriod: { start: effective, end: effective } };
}

function testObservation(
  patientId: string,
  lab: LabResultRecord,
  test: LabTestSummary,
  index: number,
  defaults: { effective: string | undefined; issued: string; specimen: boolean },
): Observation {
  const status = OBSERVATION_STATUS[fhirCode(test.observationStatus)?.toUpperCase() ?? ''] ?? lab.status;
  const alternate = test.alternateCode ? labCoding(lab, test.alternateCode.code, test.alternateCode.display, test.alternateCode.system) : undefined;
  // only the alternate code sent (issue 27 K5): no primary coding is made up and the name is the alternate's display
  const alternateOnly = hasAlternateCodeOnly(test);
  // a coding the lab sent without display keeps none (testNameFrom): no display is made up from the code or the text;
  // one sent beside a text of its own keeps its own (codeDisplay)
  const display = test.testNameFrom === 'text' ? test.codeDisplay : test.testNameFrom === 'code' ? undefined : test.testName;
  const primary = alternateOnly ? undefined : labCoding(lab, test.code, display, test.codeSystem);
  const codings = [primary, alternate].filter((c): c is Coding => c !== undefined);
  // nothing named the test (`testNameFrom: 'code'`): the coding alone, no text
  const unnamed = test.testNameFrom === 'code' && primary !== undefined;
  const effective = fhirDateTime(test.observedAt) ?? defaults.effective;
  // a test's own period (observedAt to observedEndAt, FHIR intake's effectivePeriod) as it was sent
  const observedStart = fhirDateTime(test.observedAt);
  const observedEnd = fhirDateTime(test.observedEndAt);
  const performer = testPerformer(lab, test);
  const value: ObservationValue = status === 'cancelled' ? {} : testValue(lab, test);
  const hasValue = Object.keys(value).length > 0;
  return {
    resourceType: 'Observation',
    id: `result-${index + 1}`,
    status,
    category: [{ coding: [{ system: Systems.observationCategory, code: 'laboratory', display: 'Laboratory' }] }],
    code:
      (alternateOnly || unnamed) && codings.length > 0
        ? { coding: codings }
        : { ...nonEmpty('coding', codings), text: fhirString(test.testName) ?? 'Unnamed test' },
    subject: patientReference(patientId),
    ...(observedEnd !== undefined && observedStart !== undefined
      ? { effectivePeriod: { start: observedStart, end: observedEnd } }
      : observationEffective(effective)),
    issued: testIssued(test) ?? defaults.issued,
    ...(performer ? { performer: [performer] } : {}),
    ...value,
    ...(hasValue ? {} : { dataAbsentReason: { coding: [{ system: DATA_ABSENT_REASON_SYSTEM, code: status === 'cancelled' ? 'not-performed' : 'unknown' }] } }),
    ...nonEmpty('interpretation', interpretation(test)),
    ...nonEmpty('note', notes(test.comments)),
    ...(defaults.specimen ? { specimen: { reference: `#${SPECIMEN_ID}` } } : {}),
    ...nonEmpty('referenceRange', referenceRange(test)),
  };
}

/** A test's own issued (results[].reportedAt, FHIR intake's Observation.issued as sent) when it is an instant (a time of day). */
function testIssued(test: LabTestSummary): string | undefined {
  const issued = fhirDateTime(test.reportedAt);
  return issued !== undefined && issued.includes('T') ? issued : undefined;
}

const ABSOLUTE_URI = /^(?:https?:\/\/[^\s/?#]+\S*|urn:[A-Za-z0-9][A-Za-z0-9-]{0,31}:\S+)$/;

/**
 * Identifier.system (a uri) of a report performer's identifier: its namespace as sent when that is an
 * http(s) URL or a URN (FHIR intake keeps Identifier.system so); any other name (`ACME LAB`, a JSON body's
 * free text) a system of the sender, as placer numbers: `urn:interop:sender:<sender>:performer:<namespace>`.
 */
function performerSystem(lab: LabResultRecord, namespace: string | undefined): string | undefined {
  const ns = fhirString(namespace);
  if (ns === undefined) return undefined;
  return ABSOLUTE_URI.test(ns) ? ns : senderSystem(senderOf(lab), `performer:${encodeURIComponent(ns)}`);
}

/** The report's performers as the lab sent them (order.performer: display and identifier), else the sender by name. */
function reportPerformers(lab: LabResultRecord): Array<Reference<Organization>> {
  const sent = (Array.isArray(lab.order?.performer) ? lab.order.performer : [])
    .map((performer) => performerReference(lab, performer))
    .filter((reference) => Object.keys(reference).length > 0);
  if (sent.length > 0) return sent;
  return fhirString(lab.senderId) !== undefined ? [{ display: fhirString(lab.senderId)! }] : [];
}

/** A report performer as a Reference: its display and identifier as sent. */
function performerReference(lab: LabResultRecord, performer: LabPerformer | undefined): Reference<Organization> {
  const value = fhirString(performer?.identifier?.id);
  const system = performerSystem(lab, performer?.identifier?.namespace);
  return { ...present('display', fhirString(performer?.name)), ...(value ? { identifier: { ...present('system', system), value } } : {}) };
}

const OID = /^[0-2](?:\.(?:0|[1-9]\d*))+$/;

/**
 * Identifier of a test's performing organization (OBX-23 XON-10, XON-6, XON-7 as sent): system from the
 * assigning authority (a FHIR system as sent; HD-2 an OID of type ISO as `urn:oid:`, a URI of type URI as
 * itself; else the namespace or universal id as a system of the sender), type the table 0203 code.
 */
function organizationIdentifier(lab: LabResultRecord, identifier: AssignedIdentifier): Identifier | undefined {
  const value = fhirString(identifier.id);
  if (value === undefined) return undefined;
  const universalId = fhirString(identifier.universalId)?.trim();
  const universalType = fhirString(identifier.universalIdType)?.trim().toUpperCase();
  const namespace = fhirString(identifier.namespace);
  const system =
    universalId !== undefined && universalType === 'ISO' && OID.test(universalId)
      ? `urn:oid:${universalId}`
      : universalId !== undefined && (universalType === 'URI' || universalType === 'URL') && ABSOLUTE_URI.test(universalId)
        ? universalId
        : performerSystem(lab, namespace ?? universalId);
  const type = fhirCode(identifier.type);
  return { ...present('system', system), value, ...(type ? { type: { coding: [{ system: Systems.v2IdentifierType, code: type }] } } : {}) };
}

/**
 * An Observation's performer: its own performing organization (OBX-23: name and identifier), else the
 * report's first named performer (display and identifier, as OBX-23 of such a test), else the sender by name.
 */
function testPerformer(lab: LabResultRecord, test: LabTestSummary): Reference<Organization> | undefined {
  const name = fhirString(test.performingOrganization);
  const identifier = test.performingOrganizationIdentifier ? organizationIdentifier(lab, test.performingOrganizationIdentifier) : undefined;
  if (name !== undefined || identifier !== undefined) return { ...present('display', name), ...(identifier ? { identifier } : {}) };
  const reportPerformer = (Array.isArray(lab.order?.performer) ? lab.order.performer : []).find((performer) => fhirString(performer?.name) !== undefined);
  if (reportPerformer) return performerReference(lab, reportPerformer);
  const sender = fhirString(lab.senderId);
  return sender !== undefined ? { display: sender } : undefined;
}

/** Where the exports are served (the FHIR base without `/fhir`), for links to a document's single-result export. */
export interface LabReportOptions {
  serviceBaseUrl?: string;
  /** the ids as the HL7 exports write them (issue 27 item 5); ids as stored without */
  externalIds?: ClinicianAndOrderIds;
}

/** The service root of a FHIR base URL (`https://host/stage/fhir` -> `https://host/stage`; `/fhir` -> ``). */
export function serviceBaseOf(fhirBaseUrl: string): string {
  return fhirBaseUrl.replace(/\/fhir\/?$/, '');
}

/**
 * presentedForm: the result's reports (issue 27 K6), in order. A report the summary holds whole (at most
 * 16 KiB as submitted) as `data` (base64: as sent; text: its UTF-8 in base64); a larger one by `url`, its
 * single-result export GET /exportHl7LabResult (where it is whole, an OBX ED), with its `size`.
 */
function presentedForm(lab: LabResultRecord, options: LabReportOptions): Attachment[] {
  return (Array.isArray(lab.documents) ? lab.documents : []).map((document) => {
    const contentType = fhirCode(document.type)?.toLowerCase() ?? 'application/octet-stream';
    const base64 = typeof document.source === 'string' && document.source.toLowerCase() === 'base64';
    const content: Attachment =
      typeof document.data === 'string'
        ? { data: base64 ? document.data : Buffer.from(document.data, 'utf8').toString('base64') }
        : { url: `${options.serviceBaseUrl ?? ''}${labReportLocation(lab.resultId)}` };
    return {
      contentType,
      ...content,
      ...(Number.isInteger(document.bytes) && document.bytes >= 0 ? { size: document.bytes } : {}),
      ...present('title', fhirString(document.name)),
    };
  });
}

/** Where a report too large for the summary is whole: the single-result export of its result (as HL7 RP-1 in the summary). */
function labReportLocation(resultId: string): string {
  return `/exportHl7LabResult?resultId=${encodeURIComponent(resultId)}`;
}

/**
 * The report's Observations (`result-<n>`) and Specimen, as its DiagnosticReport contains them: the
 * part of {@link labDiagnosticReport} the lab Observation routes serve (lab-observation.ts), so that
 * their bundles carry none of the report's own elements (order, identifiers, performers, forms).
 */
export function labReportObservations(
  patientId: string,
  lab: LabResultRecord,
): { observations: Observation[]; specimen: Specimen | undefined; effective: string | undefined; issued: string } {
  const order = lab.order ?? {};
  const specimen = specimenResource(patientId, lab, order);
  const collectedAt = fhirDateTime(order.collectedAt) ?? fhirDateTime(order.specimen?.collectedAt);
  const issued = issuedOf(lab);
  const effective = collectedAt ?? fhirDateTime(order.reportedAt) ?? fhirDateTime(lab.resultedAt);
  const observations = lab.results
    .filter((test) => !isLabCommentRow(test))
    .map((test, i) => testObservation(patientId, lab, test, i, { effective, issued, specimen: specimen !== undefined }));
  return { observations, specimen, effective, issued };
}

/**
 * The contained resources the report's Observations refer to, with them, under the report's id: what
 * lab-observation.ts `labObservations` takes the Observations from (the same as from the whole report).
 */
export function labObservationSource(patientId: string, lab: LabResultRecord): Pick<DiagnosticReport, 'id' | 'contained'> {
  const { observations, specimen } = labReportObservations(patientId, lab);
  return { id: logicalId(patientId, lab.resultId), contained: [...observations, ...(specimen ? [specimen] : [])] };
}

export function labDiagnosticReport(patientId: string, lab: LabResultRecord, options: LabReportOptions = {}): DiagnosticReport {
  const order = lab.order ?? {};
  const { observations, specimen, effective, issued } = labReportObservations(patientId, lab);
  // OBR-8: a collection with an end (a 24-hour urine) is the Period it stands for
  const collectedEnd = fhirDateTime(order.collectedEndAt);
  const orderCollectedAt = fhirDateTime(order.collectedAt);
  const commentRows = lab.results.filter(isLabCommentRow).map((test) => fhirString(`${test.testName}: ${test.result}`));
  const orderComments = notes([...(Array.isArray(order.comments) ? order.comments : []), ...commentRows]);
  const serviceRequest = orderResource(patientId, lab, orderComments, specimen, options.externalIds);
  const contained: Array<Observation | ServiceRequest | Specimen> = [
    ...observations,
    ...(serviceRequest ? [serviceRequest] : []),
    ...(specimen ? [specimen] : []),
  ];
  const placer = placerIdentifiers(lab, options.externalIds);
  const performer = reportPerformers(lab);
  return {
    resourceType: 'DiagnosticReport',
    id: logicalId(patientId, lab.resultId),
    ...nonEmpty('contained', contained),
    identifier: [
      ...orderNumberIdentifiers(
        { type: { coding: [{ system: Systems.v2IdentifierType, code: 'ACSN', display: 'Accession ID' }] }, system: accessionSystem(lab) },
        fhirString(lab.accessionNumber),
        options.externalIds,
      ),
      ...placer,
    ],
    ...(serviceRequest ? { basedOn: [{ reference: `#${ORDER_ID}` }] } : {}),
    status: lab.status,
    category: [{ coding: [{ system: Systems.v2DiagnosticService, code: 'LAB', display: 'Laboratory' }] }],
    code: reportCode(lab),
    subject: patientReference(patientId),
    ...(collectedEnd && orderCollectedAt ? { effectivePeriod: { start: orderCollectedAt, end: collectedEnd } } : present('effectiveDateTime', effective)),
    issued,
    // the lab's performers as sent (display, identifier); else provenance: the sending lab (by name: a partner's sender id, not a resource here)
    ...nonEmpty('performer', performer),
    ...(specimen ? { specimen: [{ reference: `#${SPECIMEN_ID}` }] } : {}),
    ...nonEmpty(
      'result',
      observations.map((o) => ({ reference: `#${o.id}` })),
    ),
    ...nonEmpty('presentedForm', presentedForm(lab, options)),
    ...(lab.truncated ? { conclusion: 'Some long values or results were left out of this summary.' } : {}),
  };
}
