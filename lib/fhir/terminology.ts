/**
 * Code systems and value maps between the chart model (HL7 v2 vocabulary, as the source system
 * records it) and FHIR R4. Pure data; the chart's coding system names are HL7 table 0396 names.
 */
import type { CodeableConcept, Coding } from '@medplum/fhirtypes';
import type { CodedValue } from '../chart/types';
import { fhirCode, fhirString, present } from './text';

/** HL7 table 0396 name -> FHIR code system URI. Names not listed (and `L`, local) get no system. */
const SYSTEM_URIS: Record<string, string> = {
  LN: 'http://loinc.org',
  SCT: 'http://snomed.info/sct',
  SNM: 'http://snomed.info/sct',
  I10: 'http://hl7.org/fhir/sid/icd-10-cm',
  I10C: 'http://hl7.org/fhir/sid/icd-10-cm',
  I9C: 'http://hl7.org/fhir/sid/icd-9-cm',
  C4: 'http://www.ama-assn.org/go/cpt',
  CPT4: 'http://www.ama-assn.org/go/cpt',
  RXNORM: 'http://www.nlm.nih.gov/research/umls/rxnorm',
  CVX: 'http://hl7.org/fhir/sid/cvx',
  UCUM: 'http://unitsofmeasure.org',
  NDC: 'http://hl7.org/fhir/sid/ndc',
};

export const Systems = {
  loinc: 'http://loinc.org',
  ucum: 'http://unitsofmeasure.org',
  v2IdentifierType: 'http://terminology.hl7.org/CodeSystem/v2-0203',
  v2DiagnosticService: 'http://terminology.hl7.org/CodeSystem/v2-0074',
  v3ActCode: 'http://terminology.hl7.org/CodeSystem/v3-ActCode',
  v3ParticipationType: 'http://terminology.hl7.org/CodeSystem/v3-ParticipationType',
  observationCategory: 'http://terminology.hl7.org/CodeSystem/observation-category',
  conditionCategory: 'http://terminology.hl7.org/CodeSystem/condition-category',
  usCoreDocumentCategory: 'http://hl7.org/fhir/us/core/CodeSystem/us-core-documentreference-category',
  cdcRace: 'urn:oid:2.16.840.1.113883.6.238',
  bcp47: 'urn:ietf:bcp:47',
} as const;

/** The FHIR code system URI for a chart coding system name, when there is one. */
export function systemUri(name: string | undefined): string | undefined {
  if (!name) return undefined;
  const known = Object.prototype.hasOwnProperty.call(SYSTEM_URIS, name) ? SYSTEM_URIS[name] : undefined;
  if (known) return known;
  // HL7 v2 tables: HL70002 -> http://terminology.hl7.org/CodeSystem/v2-0002
  const table = /^HL7(\d{4})$/.exec(name);
  return table ? `http://terminology.hl7.org/CodeSystem/v2-${table[1]}` : undefined;
}

/** A chart code as a Coding; undefined when neither code nor display has printable text. */
export function coding(value: CodedValue, systemOverride?: string): Coding | undefined {
  const system = systemOverride ?? systemUri(value.system);
  const code = fhirCode(value.code);
  const display = fhirString(value.display);
  if (code === undefined && display === undefined) return undefined;
  return { ...present('system', system), ...present('code', code), ...present('display', display) };
}

/**
 * A chart code as a CodeableConcept (text = the display). `fallbackText` is used when the chart code
 * has no printable code or display and the element is required.
 */
export function codeableConcept(value: CodedValue, systemOverride?: string): CodeableConcept | undefined {
  const c = coding(value, systemOverride);
  const text = fhirString(value.display);
  if (!c) return undefined;
  return { coding: [c], ...present('text', text) };
}

/** For required elements: the concept, or a text-only concept saying the source had no code. */
export function requiredConcept(value: CodedValue, fallbackText: string): CodeableConcept {
  return codeableConcept(value) ?? { text: fallbackText };
}

/** HL7 table 0001 -> FHIR administrative gender (A ambiguous -> other, N not applicable -> unknown). */
export const GENDER: Record<string, 'male' | 'female' | 'other' | 'unknown'> = { F: 'female', M: 'male', O: 'other', A: 'other', U: 'unknown', N: 'unknown' };

/**
 * HL7 table 0004 patient class -> Encounter.class. Classes with a v3 ActCode equivalent use it
 * (the R4 binding is extensible); the others keep their v2 code.
 */
export function encounterClass(patientClass: string): Coding {
  const v3: Record<string, [string, string]> = {
    I: ['IMP', 'inpatient encounter'],
    O: ['AMB', 'ambulatory'],
    E: ['EMER', 'emergency'],
    P: ['PRENC', 'pre-admission'],
  };
  const mapped = Object.prototype.hasOwnProperty.call(v3, patientClass) ? v3[patientClass] : undefined;
  if (mapped) return { system: Systems.v3ActCode, code: mapped[0], display: mapped[1] };
  return { system: 'http://terminology.hl7.org/CodeSystem/v2-0004', code: patientClass };
}

/** HL7 table 0038 order status -> ServiceRequest.status (required binding). */
export function serviceRequestStatus(status: string | undefined): 'active' | 'on-hold' | 'revoked' | 'completed' | 'entered-in-error' | 'unknown' {
  switch (status?.toUpperCase()) {
    case 'CM':
      return 'completed';
    case 'A':
    case 'IP':
    case 'SC':
      return 'active';
    case 'HD':
      return 'on-hold';
    case 'CA':
    case 'DC':
    case 'RP':
      return 'revoked';
    case 'ER':
      return 'entered-in-error';
    default:
      return 'unknown';
  }
}
