/**
 * A FHIR R4 DiagnosticReport (US Core Laboratory) -> the lab result body HL7 ORU intake builds
 * (`{ data: ... }` of POST /receiveTestData, lib/results/types.ts; issue 27's fields), element by
 * element; the inverse of the FHIR export (lib/fhir/lab-report.ts), so an exported report posted back
 * gives the same record:
 *
 *   DiagnosticReport.identifier       ACSN-typed (else the first without a PLAC type) -> accessionNumber,
 *                                     its system -> order.accessionNamespace (the export's
 *                                     `urn:interop:sender:<s>:accession:<ns>` read back to <ns>)
 *   identifier PLAC / basedOn         placer order number (+ namespace): a PLAC identifier, a basedOn
 *                                     identifier, or the identifier of a basedOn ServiceRequest
 *   status                            registered/partial/preliminary -> preliminary, final, corrected,
 *                                     amended/appended -> amended, cancelled; entered-in-error ->
 *                                     cancelled with every Observation W (entered in error); unknown refused
 *   code                              order.universalService (LOINC -> LN, SNOMED -> SCT...)
 *   effective[x]                      order.collectedAt (dateTime, or Period.start; Period.end -> order.collectedEndAt)
 *   issued                            ResultedDateUTC (UTC); without it effective, else the receipt time;
 *                                     as written (offset kept) -> order.reportedAt
 *   performer                         order.performer: each display and identifier (else the referenced
 *                                     Organization's name and first identifier), as sent
 *   specimen                          Specimen: type, collection.collected[x], identifier -> order.specimen
 *                                     (without one: the Specimen every result Observation names)
 *   basedOn ServiceRequest.note, conclusion  order.comments
 *   presentedForm                     reports (base64 data, content type, title)
 *   result -> Observation             one test each: code (first coding -> code/codeSystem, second ->
 *                                     alternateCode, text -> testName; a first coding without display, or
 *                                     a text beside another display -> testNameFrom, codeDisplay), value[x] (below), interpretation
 *                                     -> abnormalFlags, referenceRange -> text (or low-high; the bounds' unit and
 *                                     UCUM code -> referenceRangeUnits / referenceRangeUnitsCode when not the value's), status ->
 *                                     observationStatus (when it differs from the report's), effective
 *                                     -> observedAt (when it differs from the report's; effectivePeriod.end ->
 *                                     observedEndAt, when not before the start), issued -> reportedAt
 *                                     (when it differs from the report's), performer
 *                                     display -> performingOrganization, note -> comments
 *   value[x]                          Quantity -> NM (precision kept: quantity-precision extension),
 *                                     with comparator -> SN `<^5`; Range -> SN `^lo^-^hi`; Ratio -> SN
 *                                     `^n^:^d`; CodeableConcept -> CWE; string -> ST (TX when it has
 *                                     several lines); integer -> NM; boolean -> ST; dateTime -> DTM;
 *                                     time -> TM; Period refused; none (dataAbsentReason) -> empty result
 *   UCUM units                        Quantity.code with system http://unitsofmeasure.org -> unitsCode;
 *                                     Quantity.unit -> units
 *
 * Code systems: URIs with an HL7 table 0396 name get it (http://loinc.org -> LN); the export's
 * sender-local `urn:interop:sender:<s>:code:<name>` is read back to <name>; other URIs keep the code
 * without a system (the lab model's coding system is a table 0396 name, at most 20 characters).
 * The US Core Laboratory rules the R4 definitions leave open are checked here too ({@link usCoreLabIssues}).
 * Pure; problems are returned with their FHIRPath, nothing is thrown.
 */
import type { AssignedIdentifier, Coding, EntityIdentifier, LabOrder, LabPerformer, LabSpecimen, SentAge, SentConcept } from '../chart/types';
import { isObject, resolveReference, type BundleIndex, type FhirObject } from './references';
import type { StructureIssue } from './structure';
import { acceptableCollectionEnd } from '../results/validation';

export const LAB_CODE_SYSTEMS: Readonly<Record<string, string>> = {
  'http://loinc.org': 'LN',
  'http://snomed.info/sct': 'SCT',
  'http://hl7.org/fhir/sid/icd-10-cm': 'I10',
  'http://hl7.org/fhir/sid/icd-9-cm': 'I9C',
  'http://www.ama-assn.org/go/cpt': 'C4',
  'http://www.nlm.nih.gov/research/umls/rxnorm': 'RXNORM',
  'http://hl7.org/fhir/sid/cvx': 'CVX',
  'http://unitsofmeasure.org': 'UCUM',
  'http://hl7.org/fhir/sid/ndc': 'NDC',
};
const UCUM = 'http://unitsofmeasure.org';
const QUANTITY_PRECISION = 'http://hl7.org/fhir/StructureDefinition/quantity-precision';
const SENDER_SYSTEM = /^urn:interop:sender:([^:]+):(code|accession|placer|specimen)(?::(.+))?$/;
const V2_TABLE = /^http:\/\/terminology\.hl7\.org\/CodeSystem\/v2-(\d{4})$/;
const TABLE_NAME = /^[A-Za-z0-9][A-Za-z0-9.-]{0,19}$/;

/** Who the report is about, as the sender named them. */
export type SubjectClaim =
  { kind: 'chart'; patientId: string; expression: string } | { kind: 'identified'; patient?: FhirObject; identifiers: FhirObject[]; expression: string };

export interface LabMapping {
  /** the lab result body without patientID (added once the subject is resolved) */
  data: Record<string, unknown>;
  subject: SubjectClaim;
}

export type LabMappingResult = { ok: true; mapping: LabMapping } | { ok: false; issues: StructureIssue[]; status?: 400 | 422 };

function decode(part: string | undefined): string | undefined {
  if (part === undefined) return undefined;
  try {
    return decodeURIComponent(part);
  } catch {
    return part;
  }
}

/** The table 0396 name of a code system URI (undefined: keep the code without a system). */
export function codeSystemName(system: unknown): string | undefined {
  if (typeof system !== 'string') return undefined;
  if (Object.prototype.hasOwnProperty.call(LAB_CODE_SYSTEMS, system)) return LAB_CODE_SYSTEMS[system];
  const table = V2_TABLE.exec(system);
  if (table) return `HL7${table[1]}`;
  const sender = SENDER_SYSTEM.exec(system);
  if (sender && sender[2] === 'code') {
    const name = decode(sender[3]);
    return name && TABLE_NAME.test(name) ? name : undefined;
  }
  return undefined;
}

/** The namespace an identifier system names: the export's sender URN read back, else the system itself. */
function namespaceOf(system: unknown, what: 'accession' | 'placer' | 'specimen'): string | undefined {
  if (typeof system !== 'string' || system === '') return undefined;
  const sender = SENDER_SYSTEM.exec(system);
  if (sender && sender[2] === what) return decode(sender[3]);
  return system.length <= 199 ? system : undefined;
}

const str = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);

function compact<T extends Record<string, unknown>>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

function codingOf(value: unknown): Coding | undefined {
  if (!isObject(value)) return undefined;
  const code = str(value.code);
  if (!code) return undefined;
  const display = str(value.display);
  return compact({ code, display: display && display.length <= 199 ? display : undefined, system: codeSystemName(value.system) });
}

/** A coding the lab model takes (schemas/lab-result.schema.json coding: a code of 1-64 characters on one line). */
function keepableCoding(coding: Coding): boolean {
  return coding.code.length <= 64 && !/[\u0000-\u001F\u007F-\u009F]/.test(coding.code);
}

function identifierType(identifier: FhirObject): string | undefined {
  const type = isObject(identifier.type) ? identifier.type : undefined;
  const coding = list(type?.coding).find((c) => isObject(c) && typeof c.code === 'string') as FhirObject | undefined;
  return coding ? String(coding.code) : undefined;
}

/** A decimal as written: the JSON number, its written precision kept (quantity-precision extension). */
function decimalText(quantity: FhirObject): string | undefined {
  const value = quantity.value;
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  const extensions = isObject(quantity._value) ? list(quantity._value.extension) : [];
  const precision = extensions.find((x) => isObject(x) && x.url === QUANTITY_PRECISION && typeof x.valueInteger === 'number') as FhirObject | undefined;
  const digits = precision ? Number(precision.valueInteger) : undefined;
  if (digits !== undefined && Number.isInteger(digits) && digits >= 0 && digits <= 20) return value.toFixed(digits);
  const text = String(value);
  // JSON numbers print in exponent form beyond 1e21 / below 1e-6: the decimal form instead
  return /e/i.test(text) ? value.toFixed(Math.min(20, Math.max(0, -Math.floor(Math.log10(Math.abs(value))) + 15))) : text;
}

function unitsOf(quantity: FhirObject | undefined): { units?: string; unitsCode?: string } {
  if (!quantity) return {};
  const code = str(quantity.code);
  const ucum = quantity.system === UCUM && code !== undefined && /^[!-~]{1,64}$/.test(code);
  return compact({ units: str(quantity.unit) ?? (ucum ? code : undefined), unitsCode: ucum ? code : undefined });
}

type TestValue = Record<string, unknown>;

/** value[x] of an Observation as the lab model's typed value (see the table at the top). */
function valueOf(observation: FhirObject, path: string, issues: StructureIssue[]): TestValue {
  if (isObject(observation.valueQuantity)) {
    const q = observation.valueQuantity;
    const text = decimalText(q);
    if (text === undefined) {
      issues.push({ expression: `${path}.valueQuantity.value`, message: 'is required (the lab model keeps a number)' });
      return {};
    }
    const comparator = str(q.comparator);
    if (comparator) return { valueType: 'SN', result: `${comparator}${text}`, structuredNumeric: { comparator, value1: text }, ...unitsOf(q) };
    return { valueType: 'NM', result: text, numericValue: text, ...unitsOf(q) };
  }
  if (isObject(observation.valueRange)) {
    const low = isObject(observation.valueRange.low) ? observation.valueRange.low : undefined;
    const high = isObject(observation.valueRange.high) ? observation.valueRange.high : undefined;
    const lowText = low ? decimalText(low) : undefined;
    const highText = high ? decimalText(high) : undefined;
    if (lowText === undefined || highText === undefined) {
      issues.push({ expression: `${path}.valueRange`, message: 'needs both low.value and high.value (the lab model keeps a range as low-high)' });
      return {};
    }
    return { valueType: 'SN', result: `${lowText}-${highText}`, structuredNumeric: { value1: lowText, separator: '-', value2: highText }, ...unitsOf(low) };
  }
  if (isObject(observation.valueRatio)) {
    const numerator = isObject(observation.valueRatio.numerator) ? decimalText(observation.valueRatio.numerator) : undefined;
    const denominator = isObject(observation.valueRatio.denominator) ? decimalText(observation.valueRatio.denominator) : undefined;
    if (numerator === undefined || denominator === undefined) {
      issues.push({ expression: `${path}.valueRatio`, message: 'needs numerator.value and denominator.value' });
      return {};
    }
    return { valueType: 'SN', result: `${numerator}:${denominator}`, structuredNumeric: { value1: numerator, separator: ':', value2: denominator } };
  }
  if (isObject(observation.valueCodeableConcept)) {
    const concept = observation.valueCodeableConcept;
    const codings = list(concept.coding)
      .map(codingOf)
      .filter((c) => c !== undefined);
    const coded = codings[0];
    // `result` is the text a reader shows (the concept's text, else the display, else the code); the coding is
    // kept as sent: a display is never made from the text (the FHIR export gives the text back from `result`)
    const text = str(concept.text) ?? coded?.display ?? coded?.code;
    // the second coding is kept only when the lab model takes it whole (it was not taken before: a part it would refuse is left out, never refused)
    const alternate = codings[1] && keepableCoding(codings[1]) ? codings[1] : undefined;
    if (coded) return compact({ valueType: 'CWE', result: text ?? coded.code, codedValue: coded, codedValueAlternate: alternate });
    if (text) return { valueType: 'ST', result: text };
    issues.push({ expression: `${path}.valueCodeableConcept`, message: 'needs a coding with a code, or a text' });
    return {};
  }
  if (typeof observation.valueString === 'string') {
    const lines = observation.valueString.split(/\r\n|\r|\n/);
    return lines.length > 1 ? { valueType: 'TX', result: observation.valueString, textLines: lines } : { valueType: 'ST', result: observation.valueString };
  }
  if (typeof observation.valueInteger === 'number')
    return { valueType: 'NM', result: String(observation.valueInteger), numericValue: String(observation.valueInteger) };
  if (typeof observation.valueBoolean === 'boolean') return { valueType: 'ST', result: String(observation.valueBoolean) };
  if (typeof observation.valueDateTime === 'string') return { valueType: 'DTM', result: observation.valueDateTime };
  if (typeof observation.valueTime === 'string') return { valueType: 'TM', result: observation.valueTime };
  if (observation.valuePeriod !== undefined) {
    issues.push({
      expression: `${path}.valuePeriod`,
      message: 'a Period value is not taken by the lab model (send the times as components of separate Observations)',
    });
    return {};
  }
  return { result: '' };
}

const REPORT_STATUS: Record<string, string> = {
  registered: 'preliminary',
  partial: 'preliminary',
  preliminary: 'preliminary',
  final: 'final',
  corrected: 'corrected',
  amended: 'amended',
  appended: 'amended',
  cancelled: 'cancelled',
  'entered-in-error': 'cancelled',
};
/** Observation.status -> OBX-11 (table 0085), the inverse of the export's map. */
const OBSERVATION_STATUS: Record<string, string> = {
  registered: 'I',
  preliminary: 'P',
  final: 'F',
  amended: 'A',
  corrected: 'C',
  cancelled: 'X',
  'entered-in-error': 'W',
};
/** the Observation status the export writes for a report status (no OBX-11 of its own) */
const REPORT_TO_OBSERVATION: Record<string, string> = {
  preliminary: 'preliminary',
  final: 'final',
  corrected: 'corrected',
  amended: 'amended',
  cancelled: 'cancelled',
};

const INTERPRETATION_SYSTEMS = new Set(['http://terminology.hl7.org/CodeSystem/v3-ObservationInterpretation', 'http://terminology.hl7.org/CodeSystem/v2-0078']);

function effectiveOf(resource: FhirObject): string | undefined {
  if (typeof resource.effectiveDateTime === 'string') return resource.effectiveDateTime;
  if (typeof resource.effectiveInstant === 'string') return resource.effectiveInstant;
  if (isObject(resource.effectivePeriod)) return str(resource.effectivePeriod.start) ?? str(resource.effectivePeriod.end);
  return undefined;
}

/** A FHIR instant the lab model keeps as written (a fraction of at most 9 digits). */
const FHIR_INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** A UTC instant (`...Z`) of a FHIR instant or dateTime with a time; undefined for a date only. */
function utcInstant(value: string | undefined): string | undefined {
  if (!value || !/T/.test(value)) return undefined;
  if (/Z$/.test(value) && /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?Z$/.test(value)) return value;
  const ms = Date.parse(value);
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

function placerOf(report: FhirObject, bundle: BundleIndex | undefined): { placer?: EntityIdentifier; serviceRequest?: FhirObject } {
  let serviceRequest: FhirObject | undefined;
  let placer: EntityIdentifier | undefined;
  const fromIdentifier = (identifier: unknown): EntityIdentifier | undefined => {
    if (!isObject(identifier)) return undefined;
    const id = str(identifier.value);
    return id ? compact({ id, namespace: namespaceOf(identifier.system, 'placer') }) : undefined;
  };
  for (const identifier of list(report.identifier)) if (isObject(identifier) && identifierType(identifier) === 'PLAC') placer ??= fromIdentifier(identifier);
  for (const based of list(report.basedOn)) {
    if (!isObject(based)) continue;
    placer ??= fromIdentifier(based.identifier);
    if (typeof based.reference === 'string') {
      const resolved = resolveReference(based.reference, report, bundle);
      if ((resolved.kind === 'contained' || resolved.kind === 'entry') && resolved.resource.resourceType === 'ServiceRequest') {
        serviceRequest ??= resolved.resource;
        const identifiers = list(resolved.resource.identifier).filter(isObject);
        placer ??= fromIdentifier(identifiers.find((i) => identifierType(i) === 'PLAC') ?? identifiers[0]);
      }
    }
  }
  return compact({ placer, serviceRequest });
}

/**
 * The report's performers as sent (the lab that issued it; issue 27 leftovers): each Reference's display
 * and identifier, else those of the Organization it references in the report or the Bundle (its name, its
 * first identifier). A reference to a resource outside the message is not kept (the service holds no such
 * resource), its display and identifier are. Values are kept whole: the lab result rules refuse one too long.
 * The sender's own name alone (what the export writes for a report without a performer) is no performer.
 */
function performersOf(report: FhirObject, bundle: BundleIndex | undefined, sender: string): LabPerformer[] | undefined {
  const performers = list(report.performer)
    .filter(isObject)
    .map((reference): LabPerformer => {
      let name = str(reference.display);
      let identifier = isObject(reference.identifier) && str(reference.identifier.value) ? reference.identifier : undefined;
      if ((name === undefined || identifier === undefined) && typeof reference.reference === 'string') {
        const resolved = resolveReference(reference.reference, report, bundle);
        if (resolved.kind === 'contained' || resolved.kind === 'entry') {
          name ??= str(resolved.resource.name);
          identifier ??= list(resolved.resource.identifier).find((i): i is FhirObject => isObject(i) && str(i.value) !== undefined);
        }
      }
      return compact({
        name,
        identifier: identifier ? compact({ id: String(identifier.value), namespace: str(identifier.system) }) : undefined,
      });
    })
    .filter((performer) => Object.keys(performer).length > 0);
  // only the sender by name is what the export writes without one (provenance), as for an Observation's performer
  const onlySender = performers.length === 1 && performers[0]!.identifier === undefined && performers[0]!.name === sender;
  return performers.length > 0 && !onlySender ? performers : undefined;
}

const IDENTIFIER_TYPE_SYSTEM = 'http://terminology.hl7.org/CodeSystem/v2-0203';

/** A text of at most `max` characters, else undefined: these elements were not taken before, so a part the lab model would refuse is left out, never refused. */
const upTo = (value: unknown, max: number): string | undefined => {
  const text = str(value);
  return text !== undefined && text.length <= max ? text : undefined;
};

/** An Observation performer's identifier as sent: value, system (the namespace, as the report performer's) and its v2 table 0203 type. */
function organizationIdentifierOf(identifier: unknown): AssignedIdentifier | undefined {
  const id = isObject(identifier) ? upTo(identifier.value, 199) : undefined;
  if (!isObject(identifier) || id === undefined) return undefined;
  const type = isObject(identifier.type)
    ? list(identifier.type.coding).find((c): c is FhirObject => isObject(c) && c.system === IDENTIFIER_TYPE_SYSTEM && str(c.code) !== undefined)
    : undefined;
  return compact({ id, namespace: upTo(identifier.system, 199), type: type ? upTo(type.code, 20) : undefined });
}

/** A CodeableConcept as sent (codings with a code, their systems as URIs; text); undefined when empty. */
function sentConceptOf(value: unknown): SentConcept | undefined {
  if (!isObject(value)) return undefined;
  const coding = list(value.coding)
    .filter((c): c is FhirObject => isObject(c) && upTo(c.code, 64) !== undefined)
    .slice(0, 10)
    .map((c) => compact({ system: upTo(c.system, 255), code: String(c.code), display: upTo(c.display, 199) }));
  const concept = compact({ coding: coding.length > 0 ? coding : undefined, text: upTo(value.text, 199) });
  return Object.keys(concept).length > 0 ? concept : undefined;
}

/** An age bound (Quantity) as sent: the value as written, its unit, its UCUM code. */
function sentAgeOf(value: unknown): SentAge | undefined {
  if (!isObject(value)) return undefined;
  const written = decimalText(value);
  // a decimal as the lab model takes it (an exponent form such as 1e+40 is none)
  if (written === undefined || written.length > 32 || !/^[+-]?(\d+(\.\d*)?|\.\d+)$/.test(written)) return undefined;
  const code = value.system === UCUM ? upTo(value.code, 64) : undefined;
  return compact({ value: written, unit: upTo(value.unit, 64), code: code !== undefined && /^[!-~]+$/.test(code) ? code : undefined });
}

/** referenceRange.type, .appliesTo and .age as sent (issue 41: they were dropped). */
function rangeContextOf(range: FhirObject): {
  referenceRangeType?: SentConcept;
  referenceRangeAppliesTo?: SentConcept[];
  referenceRangeAge?: { low?: SentAge; high?: SentAge };
} {
  const appliesTo = list(range.appliesTo)
    .map(sentConceptOf)
    .filter((c): c is SentConcept => c !== undefined)
    .slice(0, 10);
  const age = isObject(range.age) ? compact({ low: sentAgeOf(range.age.low), high: sentAgeOf(range.age.high) }) : {};
  return compact({
    referenceRangeType: sentConceptOf(range.type),
    referenceRangeAppliesTo: appliesTo.length > 0 ? appliesTo : undefined,
    referenceRangeAge: Object.keys(age).length > 0 ? age : undefined,
  });
}

/**
 * The report's specimen; without one, the specimen every result Observation names (the US Core
 * examples link it from each Observation only). Results naming different specimens give none: the
 * lab model holds one specimen per order.
 */
function specimenOf(report: FhirObject, bundle: BundleIndex | undefined, path: string, issues: StructureIssue[]): LabSpecimen | undefined {
  const ref = list(report.specimen)[0];
  if (isObject(ref) && typeof ref.reference === 'string') {
    const resolved = resolveReference(ref.reference, report, bundle);
    if (resolved.kind !== 'contained' && resolved.kind !== 'entry') return undefined;
    if (resolved.resource.resourceType !== 'Specimen') {
      issues.push({ expression: `${path}.specimen[0].reference`, message: 'must reference a Specimen' });
      return undefined;
    }
    return specimenFields(resolved.resource);
  }
  const named = new Set<FhirObject>();
  for (const result of list(report.result)) {
    const observation = isObject(result) && typeof result.reference === 'string' ? resolveReference(result.reference, report, bundle) : undefined;
    if (observation?.kind !== 'contained' && observation?.kind !== 'entry') continue;
    const specimenRef = isObject(observation.resource.specimen) ? observation.resource.specimen.reference : undefined;
    if (typeof specimenRef !== 'string') continue;
    // a contained Observation's `#id` names a resource contained in the report beside it
    const resolved = resolveReference(specimenRef, observation.kind === 'contained' ? report : observation.resource, bundle);
    if ((resolved.kind === 'contained' || resolved.kind === 'entry') && resolved.resource.resourceType === 'Specimen') named.add(resolved.resource);
  }
  return named.size === 1 ? specimenFields([...named][0]!) : undefined;
}

function specimenFields(specimen: FhirObject): LabSpecimen | undefined {
  const type = isObject(specimen.type)
    ? list(specimen.type.coding)
        .map(codingOf)
        .find((c) => c !== undefined)
    : undefined;
  const collection = isObject(specimen.collection) ? specimen.collection : undefined;
  const collectedAt = collection
    ? (str(collection.collectedDateTime) ?? (isObject(collection.collectedPeriod) ? str(collection.collectedPeriod.start) : undefined))
    : undefined;
  const identifier = [specimen.accessionIdentifier, ...list(specimen.identifier)].find((i) => isObject(i) && str(i.value)) as FhirObject | undefined;
  const id = identifier ? compact({ id: String(identifier.value), namespace: namespaceOf(identifier.system, 'specimen') }) : undefined;
  const out = compact({ type, collectedAt, id });
  return Object.keys(out).length > 0 ? out : undefined;
}

function subjectOf(report: FhirObject, bundle: BundleIndex | undefined, path: string, issues: StructureIssue[]): SubjectClaim | undefined {
  const subject = isObject(report.subject) ? report.subject : undefined;
  const at = `${path}.subject`;
  if (!subject) {
    issues.push({
      expression: at,
      message: 'is required: a reference to the Patient (contained, a Bundle entry, Patient/<chart id>) or a logical reference by identifier',
    });
    return undefined;
  }
  if (typeof subject.reference === 'string') {
    const resolved = resolveReference(subject.reference, report, bundle);
    if (resolved.kind === 'contained' || resolved.kind === 'entry') {
      if (resolved.resource.resourceType !== 'Patient') {
        issues.push({ expression: `${at}.reference`, message: 'must reference a Patient' });
        return undefined;
      }
      const identifiers = list(resolved.resource.identifier).filter(isObject);
      if (identifiers.length === 0) {
        issues.push({ expression: `${at}.reference`, message: 'the Patient must carry an identifier (the MRN in its assigning authority)' });
        return undefined;
      }
      return { kind: 'identified', patient: resolved.resource, identifiers, expression: at };
    }
    // an absolute URL outside the Bundle names a resource of another server: its id is not a chart patient's
    if (resolved.kind === 'external' && /^[A-Za-z][A-Za-z0-9+.-]*:/.test(subject.reference)) {
      issues.push({
        expression: `${at}.reference`,
        message: 'names a Patient of another server: send Patient/<chart patient id>, a contained Patient or a Bundle entry with the identifier',
      });
      return undefined;
    }
    if (resolved.kind === 'external' && resolved.type === 'Patient' && resolved.id && /^[A-Za-z0-9._:-]{1,128}$/.test(resolved.id))
      return { kind: 'chart', patientId: resolved.id, expression: at };
    issues.push({ expression: `${at}.reference`, message: 'must be a contained Patient (#id), a Patient entry of the Bundle, or Patient/<chart patient id>' });
    return undefined;
  }
  if (isObject(subject.identifier) && str(subject.identifier.value))
    return { kind: 'identified', identifiers: [subject.identifier], expression: `${at}.identifier` };
  issues.push({ expression: at, message: 'must carry a reference or an identifier (system and value)' });
  return undefined;
}

const V2_0074 = 'http://terminology.hl7.org/CodeSystem/v2-0074';
const OBSERVATION_CATEGORY = 'http://terminology.hl7.org/CodeSystem/observation-category';

function hasCoding(concepts: unknown, system: string, code: string): boolean {
  return list(concepts).some((concept) => isObject(concept) && list(concept.coding).some((c) => isObject(c) && c.system === system && c.code === code));
}

/**
 * The US Core 5.0.1 Laboratory rules the R4 definitions leave open: DiagnosticReport (Lab) category LAB
 * (v2-0074), effective[x] required; Laboratory Result Observation category `laboratory`, us-core-2 (a
 * value[x] or a dataAbsentReason). Not us-core-1 (an Observation's effectiveDateTime at least to the
 * day): a lab's month or year (`2026-03`, `2026`) is a valid R4 dateTime and HL7 intake takes OBX-14 at
 * that precision, so FHIR intake takes it too and keeps it; the FHIR export writes such a time as the
 * Period it stands for (start = end = `2026-03`), which us-core-1 allows.
 */
export function usCoreLabIssues(report: FhirObject, path: string, observations: Array<{ observation: FhirObject; path: string }>): StructureIssue[] {
  const issues: StructureIssue[] = [];
  if (!hasCoding(report.category, V2_0074, 'LAB'))
    issues.push({ expression: `${path}.category`, message: `US Core lab: a category with system ${V2_0074} and code LAB is required` });
  if (report.effectiveDateTime === undefined && report.effectivePeriod === undefined)
    issues.push({ expression: `${path}.effective[x]`, message: 'US Core lab: effective[x] (the clinically relevant time, e.g. the collection) is required' });
  for (const { observation, path: at } of observations) {
    if (!hasCoding(observation.category, OBSERVATION_CATEGORY, 'laboratory'))
      issues.push({ expression: `${at}.category`, message: `US Core lab: a category with system ${OBSERVATION_CATEGORY} and code laboratory is required` });
    const hasValue = Object.keys(observation).some((k) => k.startsWith('value'));
    if (!hasValue && observation.dataAbsentReason === undefined && observation.component === undefined)
      issues.push({ expression: at, message: 'US Core lab (us-core-2): a value[x] or a dataAbsentReason is required' });
  }
  return issues;
}

export interface LabMappingContext {
  /** the sender id the result is filed under (the partner's, or meta.source when it names one) */
  sender: string;
  /** the Bundle the report came in (its entries resolve references) */
  bundle?: BundleIndex;
  /** FHIRPath of the report (`DiagnosticReport`, `Bundle.entry[2].resource`) */
  path: string;
  now: Date;
}

/** The lab result body of a DiagnosticReport (structurally valid R4 already) and the subject it names. */
export function labResultFromReport(report: FhirObject, context: LabMappingContext): LabMappingResult {
  const { path, bundle } = context;
  const issues: StructureIssue[] = [];
  const identifiers = list(report.identifier).filter(isObject);
  const accessionIdentifier =
    identifiers.find((i) => identifierType(i) === 'ACSN' && str(i.value)) ?? identifiers.find((i) => identifierType(i) !== 'PLAC' && str(i.value));
  if (!accessionIdentifier)
    issues.push({
      expression: `${path}.identifier`,
      message: "is required: the filler's accession number (an identifier of type ACSN, or the first identifier)",
    });
  const statusText = String(report.status);
  const status = REPORT_STATUS[statusText];
  if (!status)
    issues.push({
      expression: `${path}.status`,
      message: 'unknown is not filed: send registered, partial, preliminary, final, amended, corrected, appended, cancelled or entered-in-error',
    });
  const subject = subjectOf(report, bundle, path, issues);
  const effective = effectiveOf(report);
  const issued = str(report.issued);
  const resultedAt = utcInstant(issued) ?? utcInstant(effective) ?? context.now.toISOString();
  // issued as the lab wrote it (its offset kept); ResultedDateUTC is the same instant in UTC
  const reportedAt = issued !== undefined && issued !== resultedAt && FHIR_INSTANT.test(issued) ? issued : undefined;
  const { placer, serviceRequest } = placerOf(report, bundle);
  const universalService = isObject(report.code)
    ? list(report.code.coding)
        .map(codingOf)
        .find((c) => c !== undefined)
    : undefined;
  const serviceComments = serviceRequest ? list(serviceRequest.note).map((n) => (isObject(n) ? str(n.text) : undefined)) : [];
  const comments = [...serviceComments, str(report.conclusion)].filter((c): c is string => c !== undefined);
  const specimen = specimenOf(report, bundle, path, issues);
  const reportObservationStatus = status ? REPORT_TO_OBSERVATION[status] : undefined;

  const results: TestValue[] = [];
  const checked: Array<{ observation: FhirObject; path: string }> = [];
  const refs = list(report.result);
  if (refs.length === 0) issues.push({ expression: `${path}.result`, message: 'is required: the report must carry at least one Observation' });
  refs.forEach((ref, i) => {
    const at = `${path}.result[${i}]`;
    const resolved = isObject(ref) && typeof ref.reference === 'string' ? resolveReference(ref.reference, report, bundle) : { kind: 'unresolved' as const };
    if ((resolved.kind !== 'contained' && resolved.kind !== 'entry') || resolved.resource.resourceType !== 'Observation') {
      issues.push({ expression: `${at}.reference`, message: 'must reference an Observation contained in the report (#id) or an entry of the Bundle' });
      return;
    }
    const observation = resolved.resource;
    const obsPath =
      resolved.kind === 'entry'
        ? `Bundle.entry[${resolved.index}].resource`
        : `${path}.contained.where(id='${String(observation.id).replace(/[^A-Za-z0-9\-.]/g, '')}')`;
    checked.push({ observation, path: obsPath });
    if (observation.hasMember !== undefined) {
      issues.push({ expression: `${obsPath}.hasMember`, message: 'panels of panels are not taken: list each member Observation in DiagnosticReport.result' });
      return;
    }
    const code = isObject(observation.code) ? observation.code : {};
    const codings = list(code.coding)
      .map(codingOf)
      .filter((c): c is Coding => c !== undefined);
    const text = str(code.text);
    const testName = text ?? codings[0]?.display ?? codings[0]?.code;
    // a coding without display: none is made up in the exports (the name is code.text, else only the code);
    // a text beside another display: both kept (the display is the coding's, the text the name)
    const primaryDisplay = codings[0]?.display;
    const testNameFrom =
      codings[0] === undefined
        ? undefined
        : primaryDisplay === undefined
          ? text !== undefined
            ? 'text'
            : 'code'
          : text !== undefined && text !== primaryDisplay
            ? 'text'
            : undefined;
    const codeDisplay = testNameFrom === 'text' ? primaryDisplay : undefined;
    if (!testName) {
      issues.push({ expression: `${obsPath}.code`, message: 'needs a text or a coding with a code (the test name)' });
      return;
    }
    const primary = codings[0];
    const value = valueOf(observation, obsPath, issues);
    const flags = list(observation.interpretation)
      .flatMap((concept) => (isObject(concept) ? list(concept.coding) : []))
      .filter((c): c is FhirObject => isObject(c) && typeof c.code === 'string' && (c.system === undefined || INTERPRETATION_SYSTEMS.has(String(c.system))))
      .map((c) => String(c.code));
    const range = list(observation.referenceRange)[0];
    const rangeText = isObject(range)
      ? (str(range.text) ??
        (isObject(range.low) && isObject(range.high) && decimalText(range.low) !== undefined && decimalText(range.high) !== undefined
          ? `${decimalText(range.low)}-${decimalText(range.high)}`
          : undefined))
      : undefined;
    // the bounds' units as sent, when they are not the value's (the export writes the value's otherwise): both
    // fields as the range has them (a unit without a code stays so), never one of them borrowed from the value
    const rangeBound = isObject(range) ? (isObject(range.low) ? range.low : isObject(range.high) ? range.high : undefined) : undefined;
    const rangeUnits = unitsOf(rangeBound);
    const valueUnits = value as { units?: unknown; unitsCode?: unknown };
    const rangeHasOwnUnits =
      (rangeUnits.units !== undefined || rangeUnits.unitsCode !== undefined) &&
      (rangeUnits.units !== valueUnits.units || rangeUnits.unitsCode !== valueUnits.unitsCode);
    const observationStatus =
      report.status === 'entered-in-error' ? 'W' : observation.status === reportObservationStatus ? undefined : OBSERVATION_STATUS[String(observation.status)];
    // an effectivePeriod's end, when it has a start, ends after it and is not the start itself (a Period of one time is that time)
    const observedEndAt = isObject(observation.effectivePeriod)
      ? [acceptableCollectionEnd(str(observation.effectivePeriod.start), str(observation.effectivePeriod.end), context.now)].find(
          (end) => end !== str(isObject(observation.effectivePeriod) ? observation.effectivePeriod.start : undefined),
        )
      : undefined;
    const observedAt = effectiveOf(observation);
    const ownIssued = str(observation.issued);
    const performer = list(observation.performer)
      .map((p) => (isObject(p) ? str(p.display) : undefined))
      .find((d) => d !== undefined);
    const performerIdentifier = list(observation.performer)
      .map((p) => (isObject(p) ? organizationIdentifierOf(p.identifier) : undefined))
      .find((i) => i !== undefined);
    const notes = list(observation.note)
      .map((n) => (isObject(n) ? str(n.text) : undefined))
      .filter((t): t is string => t !== undefined);
    results.push(
      compact({
        testName: testName.length > 256 ? testName.slice(0, 256) : testName,
        result: '',
        ...value,
        referenceRange: rangeText,
        referenceRangeUnits: rangeHasOwnUnits ? rangeUnits.units : undefined,
        referenceRangeUnitsCode: rangeHasOwnUnits ? rangeUnits.unitsCode : undefined,
        // the range's type, population and ages as sent (with the range they qualify: FHIR ref-1 needs low, high or text)
        ...(rangeText !== undefined && isObject(range) ? rangeContextOf(range) : {}),
        code: primary?.code,
        codeSystem: primary?.code !== undefined ? primary.system : undefined,
        testNameFrom,
        codeDisplay,
        alternateCode: codings[1],
        abnormalFlags: flags.length > 0 ? flags : undefined,
        observationStatus,
        observedAt: observedAt !== undefined && (observedAt !== effective || observedEndAt !== undefined) ? observedAt : undefined,
        observedEndAt,
        // its own issued (released apart from the report), as written
        reportedAt: ownIssued !== undefined && ownIssued !== issued ? ownIssued : undefined,
        performingOrganization: performer !== undefined && (performer !== context.sender || performerIdentifier !== undefined) ? performer : undefined,
        performingOrganizationIdentifier: performerIdentifier,
        comments: notes.length > 0 ? notes : undefined,
      }),
    );
  });
  issues.push(...usCoreLabIssues(report, path, checked));
  const reports = list(report.presentedForm)
    .filter(isObject)
    .map((form, i) => {
      if (typeof form.data !== 'string') {
        issues.push({ expression: `${path}.presentedForm[${i}].data`, message: 'is required (a report by URL only is not fetched)' });
        return undefined;
      }
      return {
        source: 'base64',
        type: (str(form.contentType) ?? 'application/octet-stream').slice(0, 64),
        name: (str(form.title) ?? `report-${i + 1}`).slice(0, 255),
        data: form.data,
      };
    })
    .filter((r) => r !== undefined);
  if (issues.length > 0 || !subject || !status || !accessionIdentifier) return { ok: false, issues };

  const order: LabOrder = compact({
    placerOrderNumber: placer,
    accessionNamespace: namespaceOf(accessionIdentifier.system, 'accession'),
    universalService,
    collectedAt: effective,
    // a Period's end (e.g. a 24-hour collection), when it has a start too
    collectedEndAt: isObject(report.effectivePeriod)
      ? acceptableCollectionEnd(str(report.effectivePeriod.start), str(report.effectivePeriod.end), new Date())
      : undefined,
    reportedAt,
    performer: performersOf(report, bundle, context.sender),
    specimen,
    comments: comments.length > 0 ? comments : undefined,
  });
  return {
    ok: true,
    mapping: {
      subject,
      data: compact({
        senderID: context.sender,
        accessionNumber: String(accessionIdentifier.value),
        status,
        ResultedDateUTC: resultedAt,
        results,
        reports: reports.length > 0 ? reports : undefined,
        order: Object.keys(order).length > 0 ? order : undefined,
      }),
    },
  };
}

/** A lab-result validation pointer (`/data/results/2/units`) as the FHIRPath of the element it came from. */
export function expressionOfPointer(pointer: string, reportPath: string): string {
  const result = /^\/data\/results\/(\d+)(?:\/(\w+))?/.exec(pointer);
  if (result) {
    const element: Record<string, string> = {
      testName: 'code.text',
      code: 'code.coding[0].code',
      codeSystem: 'code.coding[0].system',
      alternateCode: 'code.coding[1]',
      units: 'value.unit',
      unitsCode: 'value.code',
      numericValue: 'value',
      structuredNumeric: 'value',
      codedValue: 'valueCodeableConcept',
      codedValueAlternate: 'valueCodeableConcept.coding[1]',
      textLines: 'valueString',
      result: 'value',
      referenceRange: 'referenceRange[0]',
      referenceRangeUnits: 'referenceRange[0].low.unit',
      referenceRangeUnitsCode: 'referenceRange[0].low.code',
      abnormalFlags: 'interpretation',
      observationStatus: 'status',
      observedAt: 'effective',
      observedEndAt: 'effectivePeriod.end',
      reportedAt: 'issued',
      performingOrganization: 'performer[0].display',
      performingOrganizationIdentifier: 'performer[0].identifier',
      referenceRangeType: 'referenceRange[0].type',
      referenceRangeAppliesTo: 'referenceRange[0].appliesTo',
      referenceRangeAge: 'referenceRange[0].age',
      comments: 'note',
      testNameFrom: 'code',
    };
    return `${reportPath}.result[${result[1]}].resolve()${result[2] ? `.${element[result[2]] ?? result[2]}` : ''}`;
  }
  if (pointer.startsWith('/data/accessionNumber')) return `${reportPath}.identifier`;
  if (pointer.startsWith('/data/ResultedDateUTC')) return `${reportPath}.issued`;
  if (pointer.startsWith('/data/status')) return `${reportPath}.status`;
  if (pointer.startsWith('/data/patientID')) return `${reportPath}.subject`;
  if (pointer.startsWith('/data/senderID')) return `${reportPath}.meta.source`;
  if (pointer.startsWith('/data/reports')) return `${reportPath}.presentedForm`;
  const order = /^\/data\/order\/(\w+)/.exec(pointer);
  if (order) {
    const element: Record<string, string> = {
      placerOrderNumber: 'basedOn',
      accessionNamespace: 'identifier.system',
      universalService: 'code',
      collectedAt: 'effective',
      collectedEndAt: 'effectivePeriod.end',
      reportedAt: 'issued',
      performer: 'performer',
      specimen: 'specimen',
      comments: 'conclusion',
    };
    return `${reportPath}.${element[order[1]!] ?? order[1]}`;
  }
  return reportPath;
}
