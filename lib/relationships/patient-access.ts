/**
 * The one rule for which chart patients a request may reach (docs/write-authority.md,
 * "Relationships"). Every patient-scoped read (HL7 exports, FHIR reads, searches, `$everything`,
 * webhook deliveries) and every filing write asks it before any chart lookup, so the answer is
 * the same for a patient that exists and one that does not.
 *
 *   read  (patient access `all`)      -> allowed, no lookup
 *   read  (patient access `related`)  -> allowed when a relationship holds
 *   file  (any partner)               -> allowed when a relationship holds
 *
 * A principal without `patientAccess` (a decision an older authorizer encoded) is read as
 * `related`: fail closed.
 */
import { ForbiddenByPolicyError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { DEFAULT_PURPOSE_OF_USE, relationshipHolds, type PartnerPatientRelationship, type PurposeOfUse } from './relationships';

/** The 403 detail, the same for a patient that does not exist as for one not related. */
export const PATIENT_BLOCKED_DETAIL = 'this patient is blocked by partner policy';

/** Reads one partner's relationship with one patient (lib/relationships/relationships.ts readRelationship). */
export type RelationshipLookup = (partnerId: string, patientId: string) => Promise<PartnerPatientRelationship | undefined>;

export interface PatientReach {
  allowed: boolean;
  /** the holding relationship, when there is one (its purpose is the default purpose of use) */
  relationship?: PartnerPatientRelationship;
}

/** Whether the principal may read the patient's chart. */
export async function patientReadReach(
  principal: Pick<Principal, 'partnerId' | 'patientAccess'>,
  patientId: string,
  lookup: RelationshipLookup,
  now: Date,
): Promise<PatientReach> {
  if (principal.patientAccess === 'all') return { allowed: true };
  const relationship = await lookup(principal.partnerId, patientId);
  return relationshipHolds(relationship, now) ? { allowed: true, relationship } : { allowed: false };
}

/** Throws the policy 403 unless the principal may read the patient's chart. */
export async function requirePatientRead(
  principal: Pick<Principal, 'partnerId' | 'patientAccess'>,
  patientId: string,
  lookup: RelationshipLookup,
  now: Date,
): Promise<PatientReach> {
  const reach = await patientReadReach(principal, patientId, lookup, now);
  if (!reach.allowed) throw new ForbiddenByPolicyError(PATIENT_BLOCKED_DETAIL);
  return reach;
}

/** Whether the partner may file a record into the patient's chart: a holding relationship, whatever its patient access. */
export async function mayFileForPatient(partnerId: string, patientId: string, lookup: RelationshipLookup, now: Date): Promise<boolean> {
  return relationshipHolds(await lookup(partnerId, patientId), now);
}

/** The purpose of use of a disclosure: the one the request named, else the relationship's, else TREAT. */
export function purposeOfDisclosure(requested: PurposeOfUse | undefined, reach: PatientReach): PurposeOfUse {
  return requested ?? reach.relationship?.purpose ?? DEFAULT_PURPOSE_OF_USE;
}
