/**
 * GET /fhir/metadata — the FHIR R4 CapabilityStatement. No key needed (a FHIR client asks before it
 * has one); still counted by the rate limiter (per key when one is sent, else per address): 429
 * past the limit. Lists exactly the FHIR routes of the endpoint list.
 */
import { HttpEndpoints } from '../lib/config/service';
import { publicHttpEndpoint } from '../lib/http/endpoint';
import { fhirBaseUrl, fhirResponse, readFhirQuery, requireFhirAcceptable } from '../lib/http/fhir';
import { capabilityStatement } from '../lib/fhir/capability-statement';

const fhirPaths = HttpEndpoints.filter((e) => e.format === 'fhir').map((e) => e.path);

export const handler = publicHttpEndpoint('fhirMetadata', async (request) => {
  readFhirQuery(request.event, []);
  requireFhirAcceptable(request.event);
  return fhirResponse(capabilityStatement(fhirPaths, fhirBaseUrl(request.event)));
});
