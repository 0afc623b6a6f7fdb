/**
 * GET /interopInbox/relationships?patientId= — scope interop:inbox:read.
 *
 * Every partner relationship of one patient (docs/write-authority.md "Relationships"), ended ones
 * too: partner, purpose of use, how it was made, since/until, who made it, endedAt/endedBy, and
 * whether it holds now. An id that is no patient gets the same empty list.
 * 200 the list | 400 a missing or malformed patientId.
 */
import { listPatientRelationshipsRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { requireIdParameters } from '../lib/http/query';
import { relationshipsOfPatient } from '../lib/relationships/relationship-review';
import { relationshipTable } from '../lib/relationships/relationship-wiring';

export const handler = httpEndpoint(listPatientRelationshipsRoute, async (request) => {
  const { patientId } = requireIdParameters(request.event, ['patientId'] as const);
  request.audit({ action: 'inbox.relationships_list', patientId });
  const items = await relationshipsOfPatient(relationshipTable(), patientId, request.now);
  return jsonResponse(200, { patientId, items, requestId: request.requestId });
});
