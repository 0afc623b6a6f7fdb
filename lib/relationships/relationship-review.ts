/**
 * Relationships as the clinic's reviewers see and end them (GET /interopInbox/relationships,
 * POST /interopInbox/relationships/end; docs/write-authority.md "Relationships"): every relationship
 * of one patient, ended ones too, each with whether it holds now; ending one keeps it (endedAt,
 * endedBy the staff member), so who could reach the patient, and when, stays readable.
 */
import { RecordNotFoundError } from '../domain-errors';
import { patientRelationships, relationshipHolds, unrelate, type PartnerPatientRelationship, type RelationshipTable } from './relationships';

/** A relationship as a reviewer reads it: the record and whether it holds at the time of the request. */
export type ReviewedRelationship = PartnerPatientRelationship & { holding: boolean };

/** Every relationship of the patient (one Query of its partition), by partner id; an unknown patient has none. */
export async function relationshipsOfPatient(store: RelationshipTable, patientId: string, now: Date): Promise<ReviewedRelationship[]> {
  const found = await patientRelationships(store, patientId);
  return found.sort((a, b) => a.partnerId.localeCompare(b.partnerId)).map((r) => ({ ...r, holding: relationshipHolds(r, now) }));
}

/**
 * Ends the partner's holding relationship with the patient, from the next request on. RecordNotFoundError
 * when none holds (never made, already ended or expired): the same answer whether or not the patient exists.
 */
export async function endRelationship(
  store: RelationshipTable,
  ids: { partnerId: string; patientId: string },
  endedBy: string,
  now: Date,
): Promise<PartnerPatientRelationship> {
  const ended = await unrelate(store, ids.partnerId, ids.patientId, endedBy, now);
  if (!ended) throw new RecordNotFoundError('relationship', 'no holding relationship of this partner with this patient');
  return ended;
}
