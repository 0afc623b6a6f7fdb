/**
 * GET /fhir/DiagnosticReport/{id}  (scope interop:export:fhir) — a lab result with its Observations contained (one per test).
 * The id is `<patient>..<record>` (lib/fhir/logical-id.ts): the record is read under that patient's
 * key, so another patient's record, an unknown record and an id of the wrong shape are the same 404.
 * 400 malformed id or unsupported parameter, 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 */
import { fhirDiagnosticReportReadRoute } from '../lib/config/service';
import { fhirEndpoint, fhirBaseUrl, fhirResponse, rejectFhirQueryParameters, requireFhirAcceptable, requireLogicalIdParameter } from '../lib/http/fhir';
import { fhirLabDependencies } from '../lib/exports/fhir-export-wiring';
import { readDiagnosticReport } from '../lib/exports/fhir-exports';

export const handler = fhirEndpoint(fhirDiagnosticReportReadRoute, async (request) => {
  const id = requireLogicalIdParameter(request.event);
  rejectFhirQueryParameters(request.event);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.result.read' });
  const { patientId, recordId, resource } = await readDiagnosticReport(fhirLabDependencies(), id, fhirBaseUrl(request.event));
  request.audit({ action: 'fhir.result.read', patientId, resourceIds: { resultId: recordId } });
  return fhirResponse(resource);
});
