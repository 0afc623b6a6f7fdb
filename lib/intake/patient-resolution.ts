/**
 * Who a partner's HL7 message is about (docs/write-authority.md, "Patient resolution"):
 *
 *   1. a PID-3 identifier -> the sender's own partner identity for it -> its linked chart patient;
 *   2. a PID-3 identifier the chart import indexed (the chart's MRN) and agreeing demographics -> that
 *      chart patient;
 *   3. otherwise unresolved: the caller holds the record for review.
 *
 * A link (step 1) is evidence, checked again on every use: the chart's MRN index must not give the
 * identifier to another patient (the chart may issue an MRN staff linked before the chart knew it),
 * the linked patient must still be in the chart, and the message's name and birth date must agree
 * with the chart patient (or, for a staff link, with the person staff linked). Otherwise the record
 * is held again (`link-disputed`, `demographics-differ`). Before filing, the caller asks for a
 * holding relationship of the partner with the patient ({@link requireRelationship}); without one
 * the record is held (`no-relationship`).
 *
 * The outcome never changes the answer to the sender (no existence oracle). Identifiers in an
 * assigning authority another partner owns are refused (AE 204) before anything is read or stored.
 * MRNs and authorities are compared normalised (lib/chart/identifiers.ts).
 */
import { lookAlikeAuthority, normaliseAuthority, normaliseMrn } from '../chart/identifiers';
import type { Patient, PersonName } from '../chart/types';
import { normaliseName } from '../forms/normalize';
import { ErrorCodes } from '../hl7/parse-error';
import { repetitionsOf, type ParsedSegment } from '../hl7/parser';
import type { ResultKeys } from '../results/lookup-keys';
import type { ClaimedPerson } from './held-records';
import { dateFromDt, personName, present } from './hl7-values';
import { mayFileForPatient, type RelationshipLookup } from '../relationships/patient-access';
import { reject } from './ack-rejection';
import { identityKeyOf, type PartnerIdentity } from './partner-identities';

export interface Identifier {
  /** normalised MRN */
  value: string;
  /** normalised assigning authority ('' when the sender gave none) */
  authority: string;
  /** CX-5 identifier type code */
  type: string;
}

export interface ResolutionDependencies {
  keys(): Promise<ResultKeys>;
  mrnIndex: { find(identifierKey: string): Promise<string | undefined> };
  chart: { getPatient(patientId: string): Promise<Patient | undefined> };
  identities: { get(identityKey: string): Promise<PartnerIdentity | undefined> };
  authorities: {
    /** the chart's own assigning authority, normalised */
    chart: string;
    /** the partner owning an assigning authority, if any */
    ownerOf(authority: string): Promise<string | undefined>;
  };
}

/**
 * Why a record was not filed: no chart patient named; the demographics disagree with the chart; the
 * partner has no holding relationship with the patient named; a link of the partner's identity that
 * the chart now contradicts (its MRN is another patient's, or the linked patient is gone).
 */
export type UnresolvedReason = 'patient-unresolved' | 'demographics-differ' | 'no-relationship' | 'link-disputed';

export interface Resolution {
  /** the chart patient, when resolved */
  patientId?: string;
  reason?: UnresolvedReason;
  person: ClaimedPerson;
  /** the sender's identity key for this person (partner + keyed identifier): stable per sender */
  identityKey: string;
  /** the chart MRN of PID-3, when the message named one (its index key) */
  chartIdentifierKey?: string;
}

const MAX_IDENTIFIER_LENGTH = 128;

/** The chart's MRN index key of (authority, MRN), both normalised. */
export function chartIdentifierKey(keys: ResultKeys, authority: string, mrn: string): string {
  return keys.patientIdentifierKey(normaliseAuthority(authority), normaliseMrn(mrn));
}

/** PID-3 (PID-2 and PID-4 as fallbacks for old senders): every identifier with a value, normalised. */
export function pidIdentifiers(pid: ParsedSegment | undefined): Identifier[] {
  if (!pid) reject('AE', ErrorCodes.segmentSequence, 'the message has no PID segment', { segmentId: 'PID' });
  const location = { segmentId: 'PID', segmentSequence: pid.sequence, field: 3 };
  const reps = [3, 2, 4].map((field) => repetitionsOf(pid, field).filter((rep) => present(rep[0]?.[0]))).find((found) => found.length > 0) ?? [];
  const identifiers = reps.map((rep) => ({
    value: normaliseMrn(rep[0]?.[0] ?? ''),
    authority: normaliseAuthority(rep[3]?.[0] ?? ''),
    type: (rep[4]?.[0] ?? '').trim(),
  }));
  if (identifiers.length === 0 || identifiers.every((id) => id.value === ''))
    reject('AE', ErrorCodes.requiredFieldMissing, 'PID-3 must carry the patient identifier (CX-1)', location);
  if (identifiers.some((id) => id.value.length > MAX_IDENTIFIER_LENGTH || id.authority.length > MAX_IDENTIFIER_LENGTH))
    reject('AE', ErrorCodes.valueTooLong, 'PID-3 identifier or assigning authority is longer than 128 characters', location);
  // MR first: the medical record number is the identifier of record
  return identifiers.filter((id) => id.value !== '').sort((a, b) => Number(b.type === 'MR') - Number(a.type === 'MR'));
}

/** The person as PID describes them (for the reviewer and the demographics check). */
export function claimedPerson(pid: ParsedSegment | undefined, identifiers: Identifier[]): ClaimedPerson {
  const name = personName(pid?.fields[5]?.[0]);
  const birthDate = dateFromDt(pid?.fields[7]?.[0]?.[0]?.[0] ?? '');
  const sex = present(pid?.fields[8]?.[0]?.[0]?.[0]);
  return {
    ...(name ? { name } : {}),
    ...(birthDate ? { birthDate } : {}),
    ...(sex ? { sex } : {}),
    identifiers: identifiers.map((id) => ({ value: id.value, authority: id.authority })),
  };
}

/**
 * Family name, given name (and birth date: when the message has one, or always with
 * `requireBirthDate`) agree with the chart, normalised as the form matcher normalises.
 */
export function demographicsAgree(
  chart: Pick<Patient, 'name' | 'birthDate'>,
  claimed: { name?: PersonName; birthDate?: string },
  requireBirthDate: boolean,
): boolean {
  const same = (a: string | undefined, b: string | undefined) => normaliseName(a) !== '' && normaliseName(a) === normaliseName(b);
  if (!claimed.name || !same(chart.name.family, claimed.name.family) || !same(chart.name.given, claimed.name.given)) return false;
  if (claimed.birthDate === undefined) return !requireBirthDate;
  return chart.birthDate === claimed.birthDate;
}

/** Refuses identifiers in an authority another partner owns; returns those the sender may use (not the chart's). */
export async function checkNamespaces(
  identifiers: Identifier[],
  partnerId: string,
  deps: Pick<ResolutionDependencies, 'authorities'>,
  pid: ParsedSegment,
): Promise<Identifier[]> {
  const own: Identifier[] = [];
  for (const id of identifiers) {
    if (id.authority !== '' && id.authority === deps.authorities.chart) continue;
    if (lookAlikeAuthority(id.authority))
      reject('AE', ErrorCodes.unknownKeyIdentifier, 'PID-3 assigning authority (CX-4) must be visible ASCII (a look-alike of another authority)', {
        segmentId: 'PID',
        segmentSequence: pid.sequence,
        field: 3,
      });
    const owner = id.authority === '' ? undefined : await deps.authorities.ownerOf(id.authority);
    if (owner !== undefined && owner !== partnerId)
      reject('AE', ErrorCodes.unknownKeyIdentifier, 'PID-3 assigning authority (CX-4) belongs to another partner', {
        segmentId: 'PID',
        segmentSequence: pid.sequence,
        field: 3,
      });
    own.push(id);
  }
  return own;
}

/** The sender's identity key for the person: its own identifier first, else the chart MRN it named. */
export function senderIdentityKey(keys: ResultKeys, partnerId: string, own: Identifier[], identifiers: Identifier[]): string {
  const chosen = own[0] ?? identifiers[0]!;
  return identityKeyOf(partnerId, keys.patientIdentifierKey(chosen.authority, chosen.value));
}

/**
 * The chart patient a PID-3 identifier names: the chart's MRN index holds only what the chart import
 * put there (the chart's own authority, and any other authority the chart owner imported), never
 * what a partner sent. Identifiers are tried in order (MR first); the first indexed one wins.
 */
export async function findChartPatient(
  identifiers: Identifier[],
  keys: ResultKeys,
  deps: Pick<ResolutionDependencies, 'mrnIndex' | 'chart'>,
): Promise<{ patient?: Patient; indexKey?: string }> {
  for (const id of identifiers) {
    if (id.authority === '') continue;
    const indexKey = chartIdentifierKey(keys, id.authority, id.value);
    const patientId = await deps.mrnIndex.find(indexKey);
    if (!patientId) continue;
    return { patient: await deps.chart.getPatient(patientId), indexKey };
  }
  return {};
}

/** Resolves the patient of an ORU or MDM (the birth date is compared when the message has one). */
export async function resolvePatient(pid: ParsedSegment | undefined, partnerId: string, deps: ResolutionDependencies): Promise<Resolution> {
  const identifiers = pidIdentifiers(pid);
  const own = await checkNamespaces(identifiers, partnerId, deps, pid!);
  const keys = await deps.keys();
  const person = claimedPerson(pid, identifiers);
  const identityKey = senderIdentityKey(keys, partnerId, own, identifiers);
  // the sender's identities (keyed by the sender: never another partner's), for any identifier it sent,
  // including a chart-namespace MRN the chart does not know that staff linked
  for (const id of identifiers) {
    const identity = await deps.identities.get(identityKeyOf(partnerId, keys.patientIdentifierKey(id.authority, id.value)));
    if (identity?.linkedPatientId) return linkedResolution(identity, id, { person, identityKey }, keys, deps);
  }
  const chart = await findChartPatient(identifiers, keys, deps);
  if (!chart.patient) return { reason: 'patient-unresolved', person, identityKey, ...(chart.indexKey ? { chartIdentifierKey: chart.indexKey } : {}) };
  const { patient, indexKey } = chart;
  if (!demographicsAgree(patient, person, false)) return { reason: 'demographics-differ', person, identityKey, chartIdentifierKey: indexKey };
  return { patientId: patient.patientId, person, identityKey, chartIdentifierKey: indexKey };
}

/**
 * The link of a partner identity, checked against the chart as it is now (every use): the MRN index
 * must not give the identifier to another patient, the linked patient must exist, and the message's
 * demographics must agree with the chart patient, or (a staff link) with the person staff linked.
 */
export async function linkedResolution(
  identity: PartnerIdentity,
  id: Identifier,
  claimed: { person: ClaimedPerson; identityKey: string },
  keys: ResultKeys,
  deps: Pick<ResolutionDependencies, 'mrnIndex' | 'chart'>,
): Promise<Resolution> {
  const linked = identity.linkedPatientId!;
  const indexKey = id.authority === '' ? undefined : chartIdentifierKey(keys, id.authority, id.value);
  const at = indexKey ? { chartIdentifierKey: indexKey } : {};
  const holder = indexKey ? await deps.mrnIndex.find(indexKey) : undefined;
  if (holder !== undefined && holder !== linked) return { reason: 'link-disputed', ...claimed, ...at };
  const patient = await deps.chart.getPatient(linked);
  if (!patient) return { reason: 'link-disputed', ...claimed, ...at };
  const staffLinked = identity.linkedBy === 'staff' ? (identity.linkedPerson ?? identity.demographics) : undefined;
  const agrees = demographicsAgree(patient, claimed.person, false) || (staffLinked !== undefined && demographicsAgree(staffLinked, claimed.person, false));
  if (!agrees) return { reason: 'demographics-differ', ...claimed, ...at };
  return { patientId: linked, ...claimed, ...at };
}

/**
 * A resolution the partner may file under: a chart patient with whom the partner has a holding
 * relationship (whatever its patient access); otherwise the same person, unresolved, reason
 * `no-relationship` (held for review: the sender's answer does not change).
 */
export async function requireRelationship(resolution: Resolution, partnerId: string, relationships: RelationshipLookup, now: Date): Promise<Resolution> {
  if (!resolution.patientId) return resolution;
  if (await mayFileForPatient(partnerId, resolution.patientId, relationships, now)) return resolution;
  const { patientId: _named, ...rest } = resolution;
  return { ...rest, reason: 'no-relationship' };
}
