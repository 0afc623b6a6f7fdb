/**
 * GET /fhir/Observation/{id}  (scope interop:export:fhir) — an assessment as one Observation (category survey; items as components, total as the value).
 * The id is `<patient>..<record>` (lib/fhir/logical-id.ts): the record is read under that patient's
 * key, so another patient's record, an unknown record and an id of the wrong shape are the same 404.
 * 400 malformed id or unsupported parameter, 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 */
import { httpEndpoint } from '../lib/http/endpoint';
import { fhirResponse, readFhirQuery, requireFhirAcceptable, requireLogicalIdParameter } from '../lib/http/fhir';
import { fhirChartDependencies } from '../lib/exports/fhir-export-wiring';
import { readAssessmentObservation } from '../lib/exports/fhir-exports';

export const handler = httpEndpoint('fhirObservationRead', async (request) => {
  const id = requireLogicalIdParameter(request.event);
  readFhirQuery(request.event, []);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.assessment.read' });
  const { patientId, recordId, resource } = await readAssessmentObservation(fhirChartDependencies(), id);
  request.audit({ action: 'fhir.assessment.read', patientId, resourceIds: { assessmentId: recordId } });
  return fhirResponse(resource);
});
