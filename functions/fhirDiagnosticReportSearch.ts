/**
 * GET /fhir/DiagnosticReport?patient=&category=&date=&_count=&_page_token=  (scope interop:export:fhir)
 * A searchset Bundle of the patient's lab results as DiagnosticReport resources, newest first,
 * `_count` per page (1-200, default 20), a `next` link while more remain. `patient` is required
 * (`<id>` or `Patient/<id>`); `category` a token (`LAB`, `http://terminology.hl7.org/CodeSystem/v2-0074|LAB`);
 * `date` `[eq|ne|gt|lt|ge|le|sa|eb]YYYY[-MM[-DD[Thh:mm[:ss][zone]]]]`, repeated for AND, on effective[x].
 * An id that is no chart patient has no matches (an empty Bundle, as an unused id).
 * 200 the Bundle | 400 missing `patient`, a bad value, `_count` or `_page_token`, any other parameter |
 * 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 */
import { fhirDiagnosticReportSearchRoute } from '../lib/config/service';
import { fhirEndpoint, fhirBaseUrl, fhirResponse, requireFhirAcceptable } from '../lib/http/fhir';
import { readFhirQuery } from '../lib/http/fhir-query';
import { fhirLabDependencies } from '../lib/exports/fhir-export-wiring';
import { searchDiagnosticReports } from '../lib/exports/fhir-search';

export const handler = fhirEndpoint(fhirDiagnosticReportSearchRoute, async (request) => {
  const query = readFhirQuery(request.event, ['patient', 'category', 'date', '_count', '_page_token']);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.result.search' });
  const search = { ...query, patient: query.patient!, baseUrl: fhirBaseUrl(request.event), now: request.now };
  const { patientId, bundle, records } = await searchDiagnosticReports(fhirLabDependencies(), search);
  request.audit({ action: 'fhir.result.search', ...(records > 0 ? { patientId } : {}), resourceIds: { count: String(query.count), records: String(records) } });
  return fhirResponse(bundle);
});
