/**
 * POST /interopInbox/held/{heldId}/patientSearch — scope interop:inbox:review.
 *
 * The packet view's chart search for a held record (lib/intake/held-search.ts): body
 * (schemas/inbox-patient-search.schema.json) { "mrn": "..." } or { "lastName": "...", "birthDate":
 * "YYYY-MM-DD", "firstName"?: "..." }, a POST so that no MRN, name or birth date is in a URL. Exact
 * hits only, at most 20. Audited per patient shown.
 * 200 { heldId, charts: [...], more } | 400 bad body | 404 unknown held record (HeldRecordNotFoundError).
 */
import { searchHeldPatientsRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { readJsonBody } from '../lib/http/json-body';
import { assertValid } from '../lib/schemas/field-errors';
import validateSearchBody from '../lib/forms/generated/inbox-patient-search.validator';
import { matchKeysForLookup } from '../lib/forms/match-key-wiring';
import type { PatientSearchQuery } from '../lib/forms/patient-search';
import { packetReader, patientDirectory } from '../lib/forms/table-wiring';
import { heldRecords } from '../lib/intake/held-review-wiring';
import { searchChartForHeld } from '../lib/intake/held-search';

export const handler = httpEndpoint(searchHeldPatientsRoute, async (request) => {
  const heldId = request.event.pathParameters?.heldId ?? '';
  request.audit({ action: 'inbox.held_patient-search', resourceIds: { heldId: heldId.slice(0, 128) } });
  const { value } = readJsonBody(request.event);
  const query = assertValid<PatientSearchQuery>(validateSearchBody, value, 'the patient search');
  const result = await searchChartForHeld({ store: packetReader, patients: patientDirectory, keys: matchKeysForLookup, held: heldRecords() }, heldId, query);
  request.audit({ action: 'inbox.held_patient-search', resourceIds: { heldId }, relatedPatientIds: result.charts.map((c) => c.patientId) });
  return jsonResponse(200, { heldId, charts: result.charts, more: result.more, requestId: request.requestId });
});
