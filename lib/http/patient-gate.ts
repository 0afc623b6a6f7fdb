/**
 * The patient gates of the reads (lib/relationships/patient-access.ts holds the rule), each asked
 * before any chart lookup so the answer is the same whether or not the patient exists:
 * - a read naming a patient (`patientId=`, `patient=`, Patient/{id}, $everything) -> the policy 403
 *   for a patient the partner may not read;
 * - a read naming a record by its own id (a FHIR logical id carries its patient) -> "not found", the
 *   answer for an id that names nothing: a 403 there would confirm the record exists;
 * - a search listing patients -> the patients the partner may not read are left out.
 * The allowed reach is remembered on the request, where the audit step finds the relationship's
 * purpose of use for the accounting of disclosures.
 */
import { RecordNotFoundError } from '../domain-errors';
import { patientReadReach, requirePatientRead, type RelationshipLookup } from '../relationships/patient-access';
import { relationshipLookup } from '../relationships/relationship-wiring';
import type { AuthorizedRequest } from './request-state';

type GatedRequest = Pick<AuthorizedRequest, 'principal' | 'now' | 'patientReach'>;

/** The policy 403 unless the partner may read the named patient's chart. */
export async function requirePatientReadable(request: GatedRequest, patientId: string, lookup: RelationshipLookup = relationshipLookup): Promise<void> {
  const reach = await requirePatientRead(request.principal, patientId, lookup, request.now);
  request.patientReach = { ...reach, patientId };
}

/**
 * "Not found" (`what`, as the read's own not-found names it) unless the partner may read the patient
 * a record id names; an id naming no patient is left to the read, which finds nothing.
 */
export async function requireRecordPatientReadable(
  request: GatedRequest,
  patientId: string | undefined,
  what: string,
  lookup: RelationshipLookup = relationshipLookup,
): Promise<void> {
  if (patientId === undefined) return;
  const reach = await patientReadReach(request.principal, patientId, lookup, request.now);
  if (!reach.allowed) throw new RecordNotFoundError(what);
  request.patientReach = { ...reach, patientId };
}

/** The patient ids among `patientIds` the partner may read, in order. */
export async function readablePatients(
  request: GatedRequest,
  patientIds: readonly string[],
  lookup: RelationshipLookup = relationshipLookup,
): Promise<string[]> {
  const reaches = await Promise.all(patientIds.map((patientId) => patientReadReach(request.principal, patientId, lookup, request.now)));
  return patientIds.filter((_, i) => reaches[i]!.allowed);
}
