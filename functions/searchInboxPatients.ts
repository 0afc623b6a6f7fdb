/**
 * POST /interopInbox/{packetId}/patientSearch — scope interop:inbox:review (a reviewer signed in,
 * or a key with interop:inbox:review).
 *
 * Body (schemas/inbox-patient-search.schema.json): { "mrn": "..." } or { "lastName": "...",
 * "birthDate": "YYYY-MM-DD", "firstName"?: "..." }; a POST so that no MRN, name or birth date is in
 * a URL. Finds chart patients to route the packet to when none of the matcher's candidates is the
 * patient (lib/forms/patient-search.ts: exact hits only, at most 20). Audited per patient shown.
 * 200 { packetId, charts: [...], more } | 400 bad body | 404 unknown packet, or one never in the inbox
 * (InboxPacketNotFoundError).
 */
import { searchInboxPatientsRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { readJsonBody } from '../lib/http/json-body';
import { assertValid } from '../lib/schemas/field-errors';
import validateSearchBody from '../lib/forms/generated/inbox-patient-search.validator';
import { matchKeysForLookup } from '../lib/forms/match-key-wiring';
import { searchChartForPacket, type PatientSearchQuery } from '../lib/forms/patient-search';
import { packetReader, patientDirectory } from '../lib/forms/table-wiring';

export const handler = httpEndpoint(searchInboxPatientsRoute, async (request) => {
  const packetId = request.event.pathParameters?.packetId ?? '';
  request.audit({ action: 'inbox.patient-search', resourceIds: { packetId: packetId.slice(0, 128) } });
  const { value } = readJsonBody(request.event);
  const query = assertValid<PatientSearchQuery>(validateSearchBody, value, 'the patient search');
  const result = await searchChartForPacket({ store: packetReader, patients: patientDirectory, keys: matchKeysForLookup }, packetId, query);
  request.audit({ action: 'inbox.patient-search', resourceIds: { packetId }, relatedPatientIds: result.charts.map((c) => c.patientId) });
  return jsonResponse(200, { packetId, charts: result.charts, more: result.more, requestId: request.requestId });
});
