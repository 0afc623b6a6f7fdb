/**
 * The HTTP side shared by the three FHIR intake functions (functions/receiveFhir*.ts): Accept and
 * Content-Type (application/fhir+json, application/json), the JSON body, the answer as FHIR JSON with
 * `Location` and `idempotent-replayed`, the audit record.
 */
import { fhirResponse, requireFhirAcceptable } from './fhir';
import type { EndpointResponse } from './endpoint';
import { readJsonBody } from './json-body';
import type { AuthorizedRequest } from './request-state';
import { receiveFhir, type FhirIntakeDependencies, type FhirIntakeRoute } from '../fhir-intake/receive-fhir';

export async function handleFhirIntake(route: FhirIntakeRoute, request: AuthorizedRequest, deps: FhirIntakeDependencies): Promise<EndpointResponse> {
  requireFhirAcceptable(request.event);
  const { value } = readJsonBody(request.event);
  const answer = await receiveFhir(
    { route, body: value, principal: request.principal, requestId: request.requestId, requestIdSupplied: request.requestIdSupplied, now: request.now },
    deps,
  );
  request.audit(answer.audit);
  const response = fhirResponse(answer.body, answer.status);
  const headers = { ...(answer.headers ?? {}), ...(answer.replayed ? { 'idempotent-replayed': 'true' } : {}) };
  return Object.keys(headers).length > 0 ? { ...response, headers } : response;
}
