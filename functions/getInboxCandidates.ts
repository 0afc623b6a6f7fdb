/**
 * GET /interopInbox/{packetId}/candidates — scope interop:inbox:read (staff signed in, or a key with
 * interop:inbox:review).
 *
 * The chart demographics (name, birth date, sex, MRN and assigning authority, address, email, phone)
 * of every candidate the matcher recorded for the packet, of the patient the sender named and, once
 * a reviewer routed it, of the patient it went to (role routed), for the reviewer to compare with the packet. Audited per patient shown.
 * 200 { packetId, charts: [...] } | 404 unknown packet, or one never in the inbox (InboxPacketNotFoundError).
 */
import { getInboxCandidatesRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { inboxCandidateCharts } from '../lib/forms/inbox-candidates';
import { packetReader, patientDirectory } from '../lib/forms/table-wiring';

export const handler = httpEndpoint(getInboxCandidatesRoute, async (request) => {
  const packetId = request.event.pathParameters?.packetId ?? '';
  request.audit({ action: 'inbox.candidates', resourceIds: { packetId: packetId.slice(0, 128) } });
  const charts = await inboxCandidateCharts({ store: packetReader, patients: patientDirectory }, packetId);
  request.audit({ action: 'inbox.candidates', resourceIds: { packetId }, relatedPatientIds: charts.map((c) => c.patientId) });
  return jsonResponse(200, { packetId, charts, requestId: request.requestId });
});
