/**
 * GET /fhir/DiagnosticReport?patient=&category=&date=&_count=&_page_token=  (scope interop:export:fhir, or interop:read:own-results)
 * A searchset Bundle of the patient's lab results as DiagnosticReport resources, newest first,
 * `_count` per page (1-200, default 20), a `next` link while more remain. `patient` is required
 * (`<id>` or `Patient/<id>`); `category` a token (`LAB`, `http://terminology.hl7.org/CodeSystem/v2-0074|LAB`);
 * `date` `[eq|ne|gt|lt|ge|le|sa|eb]YYYY[-MM[-DD[Thh:mm[:ss][zone]]]]`, repeated for AND, on effective[x].
 * An id that is no chart patient has no matches (an empty Bundle, as an unused id).
 * 200 the Bundle | 400 missing `patient`, a bad value, `_count` or `_page_token`, any other parameter |
 * 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 * A patient the partner's patient access does not reach (docs/write-authority.md "Relationships"): the
 * policy 403, decided before any chart lookup, the same for a patient that does not exist. With only
 * interop:read:own-results: the results this partner sent for the patient, no patient gate.
 */
import { Scopes, fhirDiagnosticReportSearchRoute } from '../lib/config/service';
import { fhirEndpoint, fhirBaseUrl, fhirResponse, requireFhirAcceptable } from '../lib/http/fhir';
import { readFhirQuery } from '../lib/http/fhir-query';
import { fhirLabDependencies } from '../lib/exports/fhir-export-wiring';
import { resultReadScopeOf } from '../lib/exports/fhir-exports';
import { searchDiagnosticReports } from '../lib/exports/fhir-search';
import { patientIdOf } from '../lib/fhir/logical-id';
import { requirePatientReadable } from '../lib/http/patient-gate';

export const handler = fhirEndpoint(fhirDiagnosticReportSearchRoute, async (request) => {
  const query = readFhirQuery(request.event, ['patient', 'category', 'date', '_count', '_page_token']);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.result.search' });
  const scope = resultReadScopeOf(request.principal, Scopes.exportFhir);
  const named = patientIdOf(query.patient!);
  if (scope.sentBy === undefined && named !== undefined) await requirePatientReadable(request, named);
  const search = { ...query, ...scope, patient: query.patient!, baseUrl: fhirBaseUrl(request.event), now: request.now };
  const { patientId, bundle, records } = await searchDiagnosticReports(fhirLabDependencies(), search);
  request.audit({ action: 'fhir.result.search', ...(records > 0 ? { patientId } : {}), resourceIds: { count: String(query.count), records: String(records) } });
  return fhirResponse(bundle);
});
