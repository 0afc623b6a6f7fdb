/**
 * POST /interopInbox/relationships/end?patientId=&partnerId= — scope interop:inbox:review.
 *
 * Ends a partner's holding relationship with a patient from the next request on (docs/write-authority.md
 * "Relationships"): the partner's reads of the patient are refused, its records for the patient held
 * for review. The record is kept (endedAt, endedBy the staff member or key id). Audited under the patient.
 * 200 the ended relationship | 400 a missing or malformed id | 404 no holding relationship.
 */
import { endPatientRelationshipRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { requireIdParameters } from '../lib/http/query';
import { endRelationship } from '../lib/relationships/relationship-review';
import { relationshipTable } from '../lib/relationships/relationship-wiring';

export const handler = httpEndpoint(endPatientRelationshipRoute, async (request) => {
  const { patientId, partnerId } = requireIdParameters(request.event, ['patientId', 'partnerId'] as const);
  request.audit({ action: 'inbox.relationship_end', patientId, resourceIds: { partnerId } });
  const endedBy = request.principal.staff?.username ?? request.principal.keyId;
  const relationship = await endRelationship(relationshipTable(), { partnerId, patientId }, endedBy, request.now);
  return jsonResponse(200, { status: 'ended', relationship, requestId: request.requestId });
});
