/**
 * GET /fhir/metadata — the FHIR R4 CapabilityStatement. No key needed (a FHIR client asks before it
 * has one): an `anonymous` route, counted against the caller's address by the authorizer, 429 past
 * the anonymous limit. Lists exactly the FHIR routes of the endpoint list.
 * 200 the CapabilityStatement | 400 malformed x-request-id | 406 when Accept excludes FHIR JSON | 429.
 */
import { HttpRoutes, fhirMetadataRoute } from '../lib/config/service';
import { storelessFhirEndpoint, fhirBaseUrl, fhirResponse, rejectFhirQueryParameters, requireFhirAcceptable } from '../lib/http/fhir';
import { capabilityStatement } from '../lib/fhir/capability-statement';

const fhirRoutes = HttpRoutes.filter((e) => e.format === 'fhir').map((e) => ({ method: e.method, path: e.path }));

export const handler = storelessFhirEndpoint(fhirMetadataRoute, async (request) => {
  rejectFhirQueryParameters(request.event);
  requireFhirAcceptable(request.event);
  return fhirResponse(capabilityStatement(fhirRoutes, fhirBaseUrl(request.event)));
});
