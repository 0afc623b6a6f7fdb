/**
 * GET /disclosures?patientId=&from=&to=&limit=&cursor=  (scope interop:disclosures:read, staff only)
 *
 * The accounting of disclosures of one patient (HIPAA 45 CFR 164.528; docs/disclosures.md): every
 * export and FHIR read that sent the patient's records to a partner, oldest first: when, the
 * recipient (partner, key, staff member), what was sent (endpoint, action, resource ids), the purpose
 * of use and where it came from, the request id. from/to: a date (YYYY-MM-DD, whole day) or a UTC
 * instant, both inclusive; to defaults to now, from to six years before to. limit 1-200 (default 50);
 * cursor = nextCursor of the previous page. The same answer (an empty page) for a patient with no
 * disclosures and for an id that is no patient.
 * 200 a page | 400 a missing or bad patientId, from, to, limit or cursor.
 */
import { listDisclosuresRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { optionalIntegerParameter, optionalSingleParameter, requireIdParameters } from '../lib/http/query';
import { DEFAULT_DISCLOSURE_LIMIT, MAX_DISCLOSURE_LIMIT, disclosureRange } from '../lib/disclosures/disclosure-reader';
import { disclosureReader } from '../lib/disclosures/disclosure-reader-wiring';

export const handler = httpEndpoint(listDisclosuresRoute, async (request) => {
  const event = request.event;
  const { patientId } = requireIdParameters(event, ['patientId'] as const);
  const range = disclosureRange({ from: optionalSingleParameter(event, 'from'), to: optionalSingleParameter(event, 'to') }, request.now);
  const limit = optionalIntegerParameter(event, 'limit', { min: 1, max: MAX_DISCLOSURE_LIMIT, fallback: DEFAULT_DISCLOSURE_LIMIT });
  const cursor = optionalSingleParameter(event, 'cursor');
  // reading a patient's accounting is itself in the patient's audit trail
  request.audit({ action: 'disclosures.list', patientId, resourceIds: { from: range.from, to: range.to } });
  const page = await disclosureReader().page(patientId, range, { limit, cursor });
  return jsonResponse(200, {
    patientId,
    ...range,
    limit,
    items: page.items,
    ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}),
    requestId: request.requestId,
  });
});
