/**
 * The patient gate of a patient-scoped read: asked with the patient id the caller named, before
 * any chart lookup (lib/relationships/patient-access.ts holds the rule). Refuses with the policy
 * 403 for a patient the partner may not read, the same answer whether or not the patient exists;
 * remembers the allowed reach on the request, where the audit step finds the relationship's
 * purpose of use for the accounting of disclosures.
 */
import { requirePatientRead, type RelationshipLookup } from '../relationships/patient-access';
import { relationshipLookup } from '../relationships/relationship-wiring';
import type { AuthorizedRequest } from './request-state';

export async function requirePatientReadable(
  request: Pick<AuthorizedRequest, 'principal' | 'now' | 'patientReach'>,
  patientId: string,
  lookup: RelationshipLookup = relationshipLookup,
): Promise<void> {
  const reach = await requirePatientRead(request.principal, patientId, lookup, request.now);
  request.patientReach = { ...reach, patientId };
}
