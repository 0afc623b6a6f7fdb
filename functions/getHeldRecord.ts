/**
 * GET /interopInbox/held/{heldId} — scope interop:inbox:read.
 *
 * One record HL7 intake held for review, in full: what the list shows, plus the message id and, by
 * kind, the note with its text (document), the held result ids (lab-result) or the partner's latest
 * view of the person (identity); once routed, where to and by whom, and the chart patient it went to
 * by name and MRN (routedChart; audited under that patient).
 * 200 the record | 404 an unknown id (HeldRecordNotFoundError).
 */
import { getHeldRecordRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { getHeld, routedChartOf } from '../lib/intake/held-review';
import { heldReadDependencies, routedChartReader } from '../lib/intake/held-review-wiring';

export const handler = httpEndpoint(getHeldRecordRoute, async (request) => {
  const heldId = request.event.pathParameters?.heldId ?? '';
  request.audit({ action: 'inbox.held_read', resourceIds: { heldId: heldId.slice(0, 128) } });
  const record = await getHeld(heldReadDependencies(), heldId);
  const routedChart = await routedChartOf(routedChartReader(), record);
  if (routedChart) request.audit({ action: 'inbox.held_read', resourceIds: { heldId }, relatedPatientIds: [routedChart.patientId] });
  return jsonResponse(200, { ...record, ...(routedChart ? { routedChart } : {}), requestId: request.requestId });
});
