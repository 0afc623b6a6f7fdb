/**
 * GET /fhir/{proxy+}  (scope interop:export:fhir) — every FHIR path no other route serves (an
 * unknown resource type, `Patient/{id}/_history`, `Condition?patient=`...): 404 with an
 * OperationOutcome (`not-found`) naming the resource types this server has, instead of the
 * gateway's problem+json, so a FHIR client reads the refusal as FHIR. Reads nothing.
 * 404 always | 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 */
import { HttpRoutes, fhirRouteNotFoundRoute } from '../lib/config/service';
import { requireFhirAcceptable, storelessFhirEndpoint } from '../lib/http/fhir';
import { HttpProblem } from '../lib/http/problem';

const types = [...new Set(HttpRoutes.filter((e) => e.format === 'fhir').map((e) => e.path.split('/')[2]!))].filter((t) => /^[A-Z]/.test(t)).sort();

export const handler = storelessFhirEndpoint(fhirRouteNotFoundRoute, async (request) => {
  requireFhirAcceptable(request.event);
  throw new HttpProblem(
    'notFound',
    `this FHIR server has no such route; it serves ${types.join(', ')} (see GET /fhir/metadata for the interactions and search parameters)`,
  );
});
