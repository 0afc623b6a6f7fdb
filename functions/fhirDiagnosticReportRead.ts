/**
 * GET /fhir/DiagnosticReport/{id}  (scope interop:export:fhir, or interop:read:own-results) — a lab result with its Observations contained (one per test).
 * With the export scope, a result of a patient the partner's patient access reaches; with only
 * interop:read:own-results, a result this partner sent. Anything else is the same 404 as an unknown id.
 * The id is `<patient>..<record>` (lib/fhir/logical-id.ts): the record is read under that patient's
 * key, so another patient's record, an unknown record and an id of the wrong shape are the same 404.
 * 400 malformed id or unsupported parameter, 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 */
import { Scopes, fhirDiagnosticReportReadRoute } from '../lib/config/service';
import { fhirEndpoint, fhirBaseUrl, fhirResponse, rejectFhirQueryParameters, requireFhirAcceptable, requireLogicalIdParameter } from '../lib/http/fhir';
import { fhirLabDependencies } from '../lib/exports/fhir-export-wiring';
import { readDiagnosticReport, resultReadScopeOf } from '../lib/exports/fhir-exports';
import { recordIdsOf } from '../lib/fhir/logical-id';
import { requireRecordPatientReadable } from '../lib/http/patient-gate';

export const handler = fhirEndpoint(fhirDiagnosticReportReadRoute, async (request) => {
  const id = requireLogicalIdParameter(request.event);
  rejectFhirQueryParameters(request.event);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.result.read' });
  const scope = resultReadScopeOf(request.principal, Scopes.exportFhir);
  if (scope.sentBy === undefined) await requireRecordPatientReadable(request, recordIdsOf(id)?.patientId, 'DiagnosticReport');
  const { patientId, recordId, resource } = await readDiagnosticReport(fhirLabDependencies(), id, fhirBaseUrl(request.event), scope);
  request.audit({ action: 'fhir.result.read', patientId, resourceIds: { resultId: recordId } });
  return fhirResponse(resource);
});
