/**
 * Chart records as FHIR R4 resources (US Core-style where that is simple). Pure: the chart model
 * in, plain JSON out; no I/O, no clock (times come from the records), nothing shared with lib/hl7
 * but the chart model itself. Text goes through lib/fhir/text.ts (kept exactly, except what R4 JSON
 * cannot carry).
 *
 *   Patient            MRN identifier (type MR, system from the assigning authority), name, telecom,
 *                      gender, birthDate, address, marital status, language, US Core race and
 *                      ethnicity extensions, general practitioner, contacts (next of kin)
 *   Encounter          status from the discharge time, class, period, attending, location, reason;
 *                      diagnoses as contained Conditions, orders as contained ServiceRequests
 *   DocumentReference  a note: type LOINC 11506-3 Progress note, category clinical-note, the text as
 *                      a text/plain UTF-8 attachment (base64, byte for byte), author, encounter
 *   Observation        an assessment: one Observation (category survey) whose components are the
 *                      items; the total is the value, the interpretation its interpretation text
 *
 * Clinicians are references by identifier (the chart's clinician id) with a display name: the chart
 * holds no Practitioner records to point at. `meta.lastUpdated` is not set on chart resources: the
 * chart table stores no modification time, and an invented one would be wrong.
 */
import type {
  Address as FhirAddress,
  CodeableConcept,
  Condition,
  ContactPoint,
  DocumentReference,
  Encounter as FhirEncounter,
  Extension,
  HumanName,
  Identifier,
  Observation,
  ObservationComponent,
  Patient as FhirPatient,
  Practitioner,
  Reference,
  ServiceRequest,
} from '@medplum/fhirtypes';
import type { Assessment, AssessmentItem, Clinician, CodedValue, Encounter, Note, Patient, PersonName } from '../chart/types';
import { logicalId } from './logical-id';
import { numericValue } from './numeric';
import { Systems, codeableConcept, encounterClass, GENDER, requiredConcept, serviceRequestStatus } from './terminology';
import { fhirCode, fhirString, nonEmpty, present } from './text';

export const US_CORE = {
  patient: 'http://hl7.org/fhir/us/core/StructureDefinition/us-core-patient',
  race: 'http://hl7.org/fhir/us/core/StructureDefinition/us-core-race',
  ethnicity: 'http://hl7.org/fhir/us/core/StructureDefinition/us-core-ethnicity',
} as const;

/** Identifier system of MRNs: one URN per assigning authority (the chart names authorities, not URIs). */
export function mrnSystem(assigningAuthority: string): string {
  return `urn:interop:mrn:${encodeURIComponent(fhirString(assigningAuthority) ?? 'unknown')}`;
}

const MRN_SYSTEM_PREFIX = 'urn:interop:mrn:';

/** The assigning authority an MRN identifier system names ({@link mrnSystem} read back); undefined for any other system. */
export function mrnAuthorityOf(system: string): string | undefined {
  // URN namespace ids and their scheme are case-insensitive (RFC 8141): URN:INTEROP:MRN:X is the chart's form too
  if (system.slice(0, MRN_SYSTEM_PREFIX.length).toLowerCase() !== MRN_SYSTEM_PREFIX) return undefined;
  try {
    const authority = decodeURIComponent(system.slice(MRN_SYSTEM_PREFIX.length));
    return authority.trim() === '' ? undefined : authority;
  } catch {
    return undefined;
  }
}

/** Identifier system of the chart's clinician ids. */
export const CLINICIAN_ID_SYSTEM = 'urn:interop:clinician';

export function patientReference(patientId: string): Reference<FhirPatient> {
  return { reference: `Patient/${logicalId(patientId)}` };
}

export function encounterReference(patientId: string, encounterId: string): Reference<FhirEncounter> {
  return { reference: `Encounter/${logicalId(patientId, encounterId)}` };
}

export function humanName(name: PersonName, use?: HumanName['use']): HumanName | undefined {
  const given = [fhirString(name.given), fhirString(name.middle)].filter((g): g is string => g !== undefined);
  const prefix = fhirString(name.prefix);
  const suffix = fhirString(name.suffix);
  const family = fhirString(name.family);
  if (family === undefined && given.length === 0) return undefined;
  return {
    ...present('use', use),
    ...present('family', family),
    ...nonEmpty('given', given),
    ...nonEmpty('prefix', prefix === undefined ? [] : [prefix]),
    ...nonEmpty('suffix', suffix === undefined ? [] : [suffix]),
  };
}

/** "Dr Pat Quinn Practitioner NP": prefix, given, middle, family, suffix. */
export function displayName(name: PersonName): string | undefined {
  return fhirString([name.prefix, name.given, name.middle, name.family, name.suffix].filter((p) => typeof p === 'string' && p !== '').join(' '));
}

/**
 * The external ids of issue 27 item 5 (one external id per entity, shared by HL7 and FHIR): each id as
 * the HL7 exports write it (the stable short form where v2.5.1 limits the length, lib/hl7/identifiers.ts).
 * lib/fhir shares no code with lib/hl7, so lib/exports (external-ids.ts) hands them in. Without them
 * (pure callers, unit tests) ids are written as stored.
 */
export interface ClinicianAndOrderIds {
  /** a clinician id as XCN-1 writes it (15 characters) */
  clinician(id: string): string;
  /** a placer, filler or accession number as EI-1 of OBR-2 / OBR-3 writes it (22 characters) */
  orderNumber(id: string): string;
}

/** The ids of {@link ClinicianAndOrderIds} and the chart's document numbers (only DocumentReference writes those). */
export interface ExternalIds extends ClinicianAndOrderIds {
  /** a document number as TXA-12 writes it with `namespace` as EI-2 (EI-1 and EI-2 30 characters in all) */
  documentNumber(id: string, namespace: string): string;
  /** EI-2 of the chart's own document numbers (TXA-12 of a chart note): `HL7_IDENTIFIER_NAMESPACE` */
  entityNamespace: string;
}

/** The identifier system of the chart's document numbers in a namespace (TXA-12 EI-2, `HL7_IDENTIFIER_NAMESPACE`). */
export function documentNumberSystem(namespace: string): string {
  return `urn:interop:document-number:${encodeURIComponent(fhirString(namespace) ?? 'unknown')}`;
}

export function clinicianReference(clinician: Clinician, ids?: ClinicianAndOrderIds): Reference<Practitioner> | undefined {
  const stored = fhirString(clinician.id);
  const id = stored !== undefined && ids ? ids.clinician(stored) : stored;
  const display = displayName(clinician.name);
  if (id === undefined && display === undefined) return undefined;
  return { ...(id !== undefined ? { identifier: { system: CLINICIAN_ID_SYSTEM, value: id } } : {}), ...present('display', display) };
}

function cdcCodedExtension(url: string, value: CodedValue): Extension | undefined {
  // US Core: ombCategory (CDC race and ethnicity code system) when the code is a CDC code, and text (required)
  const cdc = /^\d{4}-\d$/.test(value.code);
  const text = fhirString(value.display) ?? fhirString(value.code);
  if (text === undefined) return undefined;
  return {
    url,
    extension: [
      ...(cdc ? [{ url: 'ombCategory', valueCoding: { system: Systems.cdcRace, code: value.code, ...present('display', fhirString(value.display)) } }] : []),
      { url: 'text', valueString: text },
    ],
  };
}

function defined<T>(list: Array<T | undefined>): T[] {
  return list.filter((x): x is T => x !== undefined);
}

export function patientResource(patient: Patient, ids?: ClinicianAndOrderIds): FhirPatient {
  const identifier: Identifier = {
    use: 'usual',
    type: { coding: [{ system: Systems.v2IdentifierType, code: 'MR', display: 'Medical record number' }], text: 'Medical record number' },
    system: mrnSystem(patient.assigningAuthority),
    ...present('value', fhirString(patient.mrn)),
    ...present('assigner', fhirString(patient.assigningAuthority) === undefined ? undefined : { display: fhirString(patient.assigningAuthority)! }),
  };
  const telecom: ContactPoint[] = defined([
    fhirString(patient.phone) === undefined ? undefined : { system: 'phone', value: fhirString(patient.phone)!, use: 'home' },
    fhirString(patient.email) === undefined ? undefined : { system: 'email', value: fhirString(patient.email)! },
  ]);
  const a = patient.address;
  const address: FhirAddress | undefined = a
    ? {
        ...nonEmpty('line', defined([fhirString(a.line1), fhirString(a.line2)])),
        ...present('city', fhirString(a.city)),
        ...present('state', fhirString(a.state)),
        ...present('postalCode', fhirString(a.postalCode)),
        ...present('country', fhirString(a.country)),
      }
    : undefined;
  const extension = defined([
    patient.race ? cdcCodedExtension(US_CORE.race, patient.race) : undefined,
    patient.ethnicity ? cdcCodedExtension(US_CORE.ethnicity, patient.ethnicity) : undefined,
  ]);
  const name = humanName(patient.name, 'official');
  const language = patient.language ? codeableConcept(patient.language, patient.language.system === 'HL70296' ? Systems.bcp47 : undefined) : undefined;
  const contacts = (patient.nextOfKin ?? []).flatMap((kin) => {
    const relationship = kin.relationship ? codeableConcept(kin.relationship) : undefined;
    const kinName = humanName(kin.name);
    const phone = fhirString(kin.phone);
    const contact = {
      ...nonEmpty('relationship', defined([relationship])),
      ...present('name', kinName),
      ...nonEmpty('telecom', phone === undefined ? [] : [{ system: 'phone' as const, value: phone }]),
    };
    return Object.keys(contact).length ? [contact] : [];
  });
  const gp = patient.primaryCareProvider ? clinicianReference(patient.primaryCareProvider, ids) : undefined;
  return {
    resourceType: 'Patient',
    id: logicalId(patient.patientId),
    meta: { profile: [US_CORE.patient] },
    ...nonEmpty('extension', extension),
    identifier: [identifier],
    ...nonEmpty('name', defined([name])),
    ...nonEmpty('telecom', telecom),
    ...present('gender', patient.sex ? (GENDER[patient.sex] ?? 'unknown') : undefined),
    ...present('birthDate', patient.birthDate),
    ...nonEmpty('address', address && Object.keys(address).length ? [address] : []),
    ...present('maritalStatus', patient.maritalStatus ? codeableConcept(patient.maritalStatus) : undefined),
    ...nonEmpty('contact', contacts),
    ...nonEmpty('communication', language ? [{ language }] : []),
    ...nonEmpty('generalPractitioner', defined([gp])),
  };
}

function diagnosisCondition(patientId: string, container: Reference<FhirEncounter>, diagnosis: CodedValue, index: number): Condition {
  return {
    resourceType: 'Condition',
    id: `diagnosis-${index + 1}`,
    category: [{ coding: [{ system: Systems.conditionCategory, code: 'encounter-diagnosis', display: 'Encounter Diagnosis' }] }],
    code: requiredConcept(diagnosis, 'Diagnosis without a code'),
    subject: patientReference(patientId),
    encounter: container,
  };
}

function orderRequest(
  patientId: string,
  container: Reference<FhirEncounter>,
  order: NonNullable<Encounter['orders']>[number],
  index: number,
  ids: ClinicianAndOrderIds | undefined,
): ServiceRequest {
  const requester = order.orderingProvider ? clinicianReference(order.orderingProvider, ids) : undefined;
  return {
    resourceType: 'ServiceRequest',
    id: `order-${index + 1}`,
    identifier: [
      {
        type: { coding: [{ system: Systems.v2IdentifierType, code: 'PLAC', display: 'Placer Identifier' }] },
        // ORC-2 / OBR-2 of the order's group (EI-1, short form beyond 22 characters)
        ...present('value', ids && fhirString(order.orderId) !== undefined ? ids.orderNumber(order.orderId) : fhirString(order.orderId)),
      },
    ],
    status: serviceRequestStatus(order.status),
    intent: 'order',
    code: requiredConcept(order.code, 'Order without a code'),
    subject: patientReference(patientId),
    encounter: container,
    ...present('authoredOn', order.orderedAt),
    ...present('requester', requester),
  };
}

/**
 * The encounter's one external id (issue 27 item 5): the visit number exactly as the HL7 exports write
 * it in PV1-19 (CX-1, the chart's encounter id or its stable short form, and CX-4 the namespace) and in
 * OBR-3 of the encounter's ORU group. lib/exports computes it (lib/hl7 identifiers.ts) and hands it in.
 */
export interface VisitNumber {
  value: string;
  namespace: string;
}

/** The identifier system of visit numbers in a namespace (HL7 CX-4, `HL7_IDENTIFIER_NAMESPACE`). */
export function visitNumberSystem(namespace: string): string {
  return `urn:interop:visit-number:${encodeURIComponent(fhirString(namespace) ?? 'unknown')}`;
}

/** System of the chart's own encounter id, used only when no visit number is handed in (pure callers, tests). */
export const ENCOUNTER_ID_SYSTEM = 'urn:interop:encounter';

export function encounterResource(encounter: Encounter, visitNumber?: VisitNumber, ids?: ClinicianAndOrderIds): FhirEncounter {
  // contained resources point back at their container with `#`
  const container: Reference<FhirEncounter> = { reference: '#' };
  const diagnoses = (encounter.diagnoses ?? []).map((d, i) => diagnosisCondition(encounter.patientId, container, d, i));
  const orders = (encounter.orders ?? []).map((o, i) => orderRequest(encounter.patientId, container, o, i, ids));
  const attending = encounter.attending ? clinicianReference(encounter.attending, ids) : undefined;
  const reason = fhirString(encounter.reason);
  const location = fhirString(encounter.location);
  return {
    resourceType: 'Encounter',
    id: logicalId(encounter.patientId, encounter.encounterId),
    ...nonEmpty('contained', [...diagnoses, ...orders]),
    identifier: [
      {
        type: { coding: [{ system: Systems.v2IdentifierType, code: 'VN', display: 'Visit number' }] },
        system: visitNumber ? visitNumberSystem(visitNumber.namespace) : ENCOUNTER_ID_SYSTEM,
        value: visitNumber?.value ?? encounter.encounterId,
      },
    ],
    status: encounter.dischargeAt ? 'finished' : 'in-progress',
    class: encounterClass(encounter.patientClass),
    subject: patientReference(encounter.patientId),
    ...nonEmpty(
      'basedOn',
      orders.map((o) => ({ reference: `#${o.id}` })),
    ),
    ...nonEmpty(
      'participant',
      attending ? [{ type: [{ coding: [{ system: Systems.v3ParticipationType, code: 'ATND', display: 'attender' }] }], individual: attending }] : [],
    ),
    period: { start: encounter.admitAt, ...present('end', encounter.dischargeAt) },
    ...nonEmpty('reasonCode', reason === undefined ? [] : [{ text: reason }]),
    ...nonEmpty(
      'diagnosis',
      diagnoses.map((d, i) => ({ condition: { reference: `#${d.id}` }, rank: i + 1 })),
    ),
    ...nonEmpty('location', location === undefined ? [] : [{ location: { display: location } }]),
  };
}

export const NOTE_CONTENT_TYPE = 'text/plain; charset=utf-8';

/**
 * A URI naming a partner (meta.source) or one of its identifier systems: ids a partner gave (its
 * document numbers, its clinicians) are never written in the chart's own systems.
 */
export function partnerSystem(partnerId: string, what?: string): string {
  return `urn:interop:partner:${encodeURIComponent(partnerId)}${what ? `:${what}` : ''}`;
}

/** TXA-17 (table 0271) -> DocumentReference.docStatus: authenticated is final, anything before it preliminary. */
function docStatusOf(note: Note): 'final' | 'preliminary' {
  if (note.completionStatus === undefined) return note.provenance ? 'preliminary' : 'final';
  return note.completionStatus === 'AU' || note.completionStatus === 'LA' ? 'final' : 'preliminary';
}

export function documentReferenceResource(note: Note, ids?: ExternalIds): DocumentReference {
  const source = note.provenance;
  // a partner's document: its clinicians' ids are the partner's, its number is the partner's
  const author = source ? partnerClinicianReference(note.author, source.partnerId, ids) : clinicianReference(note.author, ids);
  const authenticator = source && note.authenticatedBy ? partnerClinicianReference(note.authenticatedBy, source.partnerId, ids) : undefined;
  // the chart's own number: TXA-12 as the MDM writes it (EI-1 the note id or its short form, EI-2 the namespace)
  const chartNumber: Identifier = ids
    ? { system: documentNumberSystem(ids.entityNamespace), value: ids.documentNumber(note.noteId, ids.entityNamespace) }
    : { value: note.noteId };
  const partnerNumber = source && note.documentNumber ? (ids ? ids.documentNumber(note.documentNumber, source.sender) : note.documentNumber) : undefined;
  return {
    resourceType: 'DocumentReference',
    id: logicalId(note.patientId, note.noteId),
    ...(source ? { meta: { source: partnerSystem(source.partnerId) } } : {}),
    identifier: [chartNumber, ...(source && partnerNumber ? [{ system: partnerSystem(source.partnerId, 'document'), value: partnerNumber }] : [])],
    status: 'current',
    docStatus: docStatusOf(note),
    type: { coding: [{ system: Systems.loinc, code: '11506-3', display: 'Progress note' }], text: 'Progress note' },
    category: [{ coding: [{ system: Systems.usCoreDocumentCategory, code: 'clinical-note', display: 'Clinical Note' }] }],
    subject: patientReference(note.patientId),
    date: note.createdAt,
    ...nonEmpty('author', defined([author, ...(source ? [{ display: fhirString(source.sender) ?? source.partnerId }] : [])])),
    ...(authenticator ? { authenticator } : {}),
    content: [
      {
        attachment: {
          contentType: NOTE_CONTENT_TYPE,
          // the text byte for byte (UTF-8): nothing is escaped, dropped or re-wrapped
          ...(note.text.length > 0 ? { data: Buffer.from(note.text, 'utf8').toString('base64') } : {}),
          creation: note.createdAt,
        },
      },
    ],
    ...(note.encounterId ? { context: { encounter: [encounterReference(note.patientId, note.encounterId)] } } : {}),
  };
}

/** A partner's clinician: the id in the partner's system, never the chart's. */
function partnerClinicianReference(clinician: Clinician, partnerId: string, ids: ExternalIds | undefined): Reference<Practitioner> | undefined {
  const reference = clinicianReference(clinician, ids);
  if (!reference?.identifier) return reference;
  return { ...reference, identifier: { ...reference.identifier, system: partnerSystem(partnerId, 'clinician') } };
}

/** The note text back from a DocumentReference's attachment. */
export function noteTextOf(document: DocumentReference): string | undefined {
  const data = document.content?.[0]?.attachment?.data;
  return data === undefined ? undefined : Buffer.from(data, 'base64').toString('utf8');
}

function itemComponent(item: AssessmentItem): ObservationComponent {
  const code = requiredConcept(item.code, 'Item without a code');
  switch (item.kind) {
    case 'numeric': {
      // a number, or text that is a plain decimal printing back identically; any other text stays text
      const value = typeof item.value === 'number' ? item.value : typeof item.value === 'string' ? (numericValue(item.value) ?? Number.NaN) : Number.NaN;
      if (!Number.isFinite(value)) {
        const text = fhirString(typeof item.value === 'object' ? (item.value as CodedValue).code : String(item.value));
        return { code, ...present('valueString', text) };
      }
      const unit = fhirString(item.units);
      const ucum = unit !== undefined && fhirCode(unit) === unit ? unit : undefined;
      return { code, valueQuantity: { value, ...present('unit', unit), ...(ucum ? { system: Systems.ucum, code: ucum } : {}) } };
    }
    case 'coded': {
      const coded = typeof item.value === 'object' && item.value !== null ? (item.value as CodedValue) : { code: String(item.value) };
      return { code, ...present('valueCodeableConcept', codeableConcept(coded)) };
    }
    case 'text':
    default:
      return {
        code,
        ...present('valueString', fhirString(typeof item.value === 'object' && item.value !== null ? (item.value as CodedValue).code : String(item.value))),
      };
  }
}

const TOTAL_CODE: CodeableConcept = { coding: [{ code: 'TOTAL', display: 'Total score' }], text: 'Total score' };

function sameCode(a: CodeableConcept, b: CodeableConcept): boolean {
  return (a.coding ?? []).some((x) => (b.coding ?? []).some((y) => x.code === y.code && x.system === y.system));
}

/**
 * An assessment as one Observation: components carry the items (numeric -> Quantity with the units
 * as UCUM code when they are one, text -> string, coded -> CodeableConcept). The total is
 * `value[x]` (valueInteger when whole) unless an item has the panel's own code (obs-7 forbids the
 * value then), in which case it is a `TOTAL` component. The interpretation text is
 * `interpretation[0].text`.
 */
export function assessmentObservation(assessment: Assessment, ids?: ClinicianAndOrderIds): Observation {
  const code = requiredConcept(assessment.code, 'Assessment without a code');
  const components = assessment.items.map(itemComponent);
  const total = assessment.total;
  const totalValue =
    typeof total === 'number' && Number.isFinite(total)
      ? Number.isInteger(total) && Math.abs(total) <= 2147483647
        ? { valueInteger: total }
        : { valueQuantity: { value: total } }
      : undefined;
  const panelCodeRepeated = components.some((c) => sameCode(c.code, code));
  if (totalValue && panelCodeRepeated) components.push({ code: TOTAL_CODE, ...totalValue });
  const performer = assessment.performer ? clinicianReference(assessment.performer, ids) : undefined;
  const interpretation = fhirString(assessment.interpretation);
  return {
    resourceType: 'Observation',
    id: logicalId(assessment.patientId, assessment.assessmentId),
    identifier: [{ value: assessment.assessmentId }],
    status: 'final',
    category: [{ coding: [{ system: Systems.observationCategory, code: 'survey', display: 'Survey' }] }],
    code,
    subject: patientReference(assessment.patientId),
    ...(assessment.encounterId ? { encounter: encounterReference(assessment.patientId, assessment.encounterId) } : {}),
    effectiveDateTime: assessment.performedAt,
    ...nonEmpty('performer', defined([performer])),
    ...(totalValue && !panelCodeRepeated ? totalValue : {}),
    ...nonEmpty('interpretation', interpretation === undefined ? [] : [{ text: interpretation }]),
    ...nonEmpty('component', components),
  };
}
