/**
 * FHIR intake of DiagnosticReports (POST /fhir/DiagnosticReport, and the reports of POST /fhir): a lab
 * result through the writer of HL7 ORU intake (docs/fhir.md "Intake").
 *
 *   prepare   the report mapped (lab-report-mapping.ts), its sender checked against the partner, its
 *             patient resolved (reads only: partner identities, the chart's MRN index, identifier
 *             systems another partner owns refused), its body checked by the validator of
 *             POST /receiveTestData
 *   write     receiveLabResult (encryption, versions, current pointer, notification); a result of an
 *             unresolved patient held for review (lib/intake/held-records.ts) exactly as an ORU result is
 *
 * Only the functions whose route takes DiagnosticReports bundle this module (and so the lab result
 * validator and writer).
 */
import { lookAlikeAuthority, normaliseAuthority, normaliseMrn } from '../chart/identifiers';
import type { PersonName } from '../chart/types';
import { ValidationFailedError } from '../domain-errors';
import { logicalId } from '../fhir/logical-id';
import { mrnAuthorityOf } from '../fhir/chart-resources';
import { heldIdFor, type ClaimedPerson, type HeldRecord } from '../intake/held-records';
import { patientIdFor } from '../intake/message-handlers';
import { identityKeyOf } from '../intake/partner-identities';
import {
  demographicsAgree,
  findChartPatient,
  linkedResolution,
  requireRelationship,
  senderIdentityKey,
  type Identifier,
  type Resolution,
  type ResolutionDependencies,
} from '../intake/patient-resolution';
import type { Principal } from '../keys/access-decision';
import { mayFileForPatient, type RelationshipLookup } from '../relationships/patient-access';
import { namedIdIdentityKey } from '../results/lab-filing';
import { receiveLabResult, senderAllowed, type ReceiveDependencies } from '../results/receive';
import { acceptLabResult } from '../results/validation';
import { expressionOfPointer, labResultFromReport, type SubjectClaim } from './lab-report-mapping';
import { isObject, type FhirObject } from './references';
import { EntryRefusal, type EntryPlace, type EntryPreparer, type FhirIntakeInput, type PreparedEntry } from './receive-fhir';

/** What a DiagnosticReport entry reads and writes: patient resolution of HL7 intake, relationships, the lab result writer, held records. */
export interface LabReportEntryDependencies extends ResolutionDependencies {
  labResults: ReceiveDependencies;
  held: { hold(record: Omit<HeldRecord, 'state'>): Promise<boolean> };
  /** the partner's relationship with a chart patient: a report files only for a related patient */
  relationships: RelationshipLookup;
}

/** The sender a report is filed under: meta.source when it names one of the partner's senders, else the partner's first sender. */
function senderFor(resource: FhirObject, principal: Principal): string | undefined {
  const source = isObject(resource.meta) && typeof resource.meta.source === 'string' ? resource.meta.source : undefined;
  // exact sender ids only: a stored wildcard `*` allows nothing (it would cover every other partner's senders)
  const allowed = (principal.allowedSenderIds ?? []).filter((s) => s !== '*');
  if (source && allowed.includes(source)) return source;
  return allowed[0];
}

const GENDER_SEX: Record<string, string> = { male: 'M', female: 'F', other: 'O', unknown: 'U' };

function personOf(patient: FhirObject | undefined, identifiers: Identifier[]): ClaimedPerson {
  const name = Array.isArray(patient?.name) ? (patient.name.find(isObject) as FhirObject | undefined) : undefined;
  const family = typeof name?.family === 'string' ? name.family : undefined;
  const given = Array.isArray(name?.given) && typeof name.given[0] === 'string' ? name.given[0] : undefined;
  const personName: PersonName | undefined = family ? { family, ...(given ? { given } : {}) } : undefined;
  const birthDate = typeof patient?.birthDate === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(patient.birthDate) ? patient.birthDate : undefined;
  const sex = typeof patient?.gender === 'string' ? GENDER_SEX[patient.gender] : undefined;
  return {
    ...(personName ? { name: personName } : {}),
    ...(birthDate ? { birthDate } : {}),
    ...(sex ? { sex } : {}),
    identifiers: identifiers.map((id) => ({ value: id.value, authority: id.authority })),
  };
}

/** Identifier.system -> an assigning authority: the chart's `urn:interop:mrn:<A>` read back, else the system itself. */
export function authorityOfSystem(system: unknown): string {
  if (typeof system !== 'string' || system === '') return '';
  return normaliseAuthority(mrnAuthorityOf(system) ?? system);
}

/**
 * Who a report is about (docs/write-authority.md "Patient resolution", as for HL7 PID-3): the sender's
 * identities, then the chart's MRN index with agreeing demographics; an identifier system another
 * partner owns is refused (403) before anything is read or stored. Reads only.
 */
async function resolveSubject(claim: Extract<SubjectClaim, { kind: 'identified' }>, partnerId: string, deps: ResolutionDependencies): Promise<Resolution> {
  const identifiers: Identifier[] = [];
  claim.identifiers.forEach((identifier, i) => {
    const value = typeof identifier.value === 'string' ? normaliseMrn(identifier.value) : '';
    const authority = authorityOfSystem(identifier.system);
    const at = claim.patient ? `${claim.expression}.resolve().identifier[${i}]` : claim.expression;
    if (value === '') return;
    if (value.length > 128 || authority.length > 128)
      throw new EntryRefusal(400, [{ expression: at, message: 'identifier value and system must be at most 128 characters' }]);
    const type =
      isObject(identifier.type) && Array.isArray(identifier.type.coding) && isObject(identifier.type.coding[0])
        ? String(identifier.type.coding[0].code ?? '')
        : '';
    identifiers.push({ value, authority, type });
  });
  if (identifiers.length === 0)
    throw new EntryRefusal(400, [{ expression: claim.expression, message: 'the Patient needs an identifier with a value (the MRN)' }]);
  identifiers.sort((a, b) => Number(b.type === 'MR') - Number(a.type === 'MR'));
  const own: Identifier[] = [];
  for (const id of identifiers) {
    if (id.authority !== '' && id.authority === deps.authorities.chart) continue;
    if (lookAlikeAuthority(id.authority))
      throw new EntryRefusal(400, [
        { expression: claim.expression, message: 'the identifier system must be visible ASCII (a look-alike of another authority)' },
      ]);
    const owner = id.authority === '' ? undefined : await deps.authorities.ownerOf(id.authority);
    if (owner !== undefined && owner !== partnerId)
      throw new EntryRefusal(403, [{ expression: claim.expression, message: 'the identifier system is an assigning authority of another partner' }]);
    own.push(id);
  }
  const keys = await deps.keys();
  const person = personOf(claim.patient, identifiers);
  const identityKey = senderIdentityKey(keys, partnerId, own, identifiers);
  // a link of the sender's identity is checked against the chart as it is now, as for HL7 PID-3
  for (const id of identifiers) {
    const identity = await deps.identities.get(identityKeyOf(partnerId, keys.patientIdentifierKey(id.authority, id.value)));
    if (identity?.linkedPatientId) return linkedResolution(identity, id, { person, identityKey }, keys, deps);
  }
  const chart = await findChartPatient(identifiers, keys, deps);
  if (!chart.patient) return { reason: 'patient-unresolved', person, identityKey };
  if (!demographicsAgree(chart.patient, person, false)) return { reason: 'demographics-differ', person, identityKey };
  return { patientId: chart.patient.patientId, person, identityKey };
}

/** The preparer of DiagnosticReport entries. */
export function labReportEntries(deps: LabReportEntryDependencies): EntryPreparer {
  return (resource, place, input) => prepareLabReport(resource, place, input, deps);
}

async function prepareLabReport(resource: FhirObject, place: EntryPlace, input: FhirIntakeInput, deps: LabReportEntryDependencies): Promise<PreparedEntry> {
  const { path, bundle } = place;
  const sender = senderFor(resource, input.principal);
  if (!sender || !senderAllowed(input.principal, sender))
    throw new EntryRefusal(403, [{ expression: `${path}.meta.source`, message: 'this partner has no lab sender id to file results under' }]);
  const mapped = labResultFromReport(resource, { sender, bundle, path, now: input.now });
  if (!mapped.ok) throw new EntryRefusal(400, mapped.issues);
  const claim = mapped.mapping.subject;
  const partnerId = input.principal.partnerId;
  // what the report says names a patient; a relationship decides whether it files there (else held, same answer)
  const named = claim.kind === 'identified' ? await resolveSubject(claim, partnerId, deps) : await chartSubject(claim.patientId, partnerId, deps, input.now);
  const resolution = await requireRelationship(named, partnerId, deps.relationships, input.now);
  const patientID = resolution.patientId ?? patientIdFor(resolution.identityKey);
  const body = { data: { ...mapped.mapping.data, patientID } };
  try {
    acceptLabResult(body, input.now);
  } catch (error) {
    if (!(error instanceof ValidationFailedError)) throw error;
    throw new EntryRefusal(
      400,
      error.errors.slice(0, 20).map((fieldError) => {
        const pointer = 'pointer' in fieldError ? fieldError.pointer : '';
        return { expression: expressionOfPointer(pointer, path), message: fieldError.message };
      }),
    );
  }
  return { write: (sourceMessageId) => writeLabReport({ body, claim, resolution }, input, deps, sourceMessageId) };
}

/**
 * A subject `Patient/<id>` naming a chart patient by id: a resolution only when the partner is related
 * to that patient and the patient exists; otherwise unresolved under the sender's identity for the id
 * (held). The relationship is asked first, so an unrelated partner's report reads the same whether or
 * not the id is a chart patient's.
 */
async function chartSubject(patientId: string, partnerId: string, deps: LabReportEntryDependencies, now: Date): Promise<Resolution> {
  const keys = await deps.keys();
  const person: ClaimedPerson = { identifiers: [{ value: patientId, authority: '' }] };
  const identityKey = namedIdIdentityKey(keys, partnerId, patientId);
  if (!(await mayFileForPatient(partnerId, patientId, deps.relationships, now))) return { reason: 'no-relationship', person, identityKey };
  const patient = await deps.chart.getPatient(patientId);
  return patient ? { patientId, person, identityKey } : { reason: 'patient-unresolved', person, identityKey };
}

/** Stores one prepared report; a result of a patient it may not file for is held for review as an ORU result is. */
async function writeLabReport(
  entry: { body: { data: Record<string, unknown> }; claim: SubjectClaim; resolution: Resolution },
  input: FhirIntakeInput,
  deps: LabReportEntryDependencies,
  sourceMessageId: string,
): Promise<{ ok: true; status: '201 Created' | '200 OK'; location?: string; resultId: string; patientId?: string; held: boolean }> {
  const outcome = await receiveLabResult(
    { body: entry.body, principal: input.principal, requestId: input.requestId, requestIdSupplied: false, sourceMessageId, now: input.now },
    deps.labResults,
  );
  const resultId = outcome.body.resultId;
  let held = false;
  if (!entry.resolution.patientId) {
    const keys = await deps.keys();
    const heldKey = keys.patientIdentifierKey(
      'held',
      ['fhir-lab-result', input.principal.partnerId, outcome.body.version, entry.resolution.identityKey].join('\u0000'),
    );
    await deps.held.hold({
      heldId: heldIdFor(input.now.toISOString(), heldKey),
      provenance: { partnerId: input.principal.partnerId, sender: String(entry.body.data.senderID), sourceMessageId, receivedAt: input.now.toISOString() },
      person: entry.resolution.person,
      body: { kind: 'lab-result', resultIds: [resultId] },
      reason: entry.resolution.reason ?? 'patient-unresolved',
    });
    held = true;
  }
  const patientId = entry.resolution.patientId;
  return {
    ok: true,
    status: outcome.body.duplicate ? '200 OK' : '201 Created',
    resultId,
    held,
    // readable through GET /fhir/DiagnosticReport/{id} when the sender named the chart patient by id (it
    // already knows that id); a patient named by identifier gets no location either way (no existence oracle)
    ...(entry.claim.kind === 'chart' ? { location: `DiagnosticReport/${logicalId(entry.claim.patientId, resultId)}` } : {}),
    ...(patientId ? { patientId } : {}),
  };
}
