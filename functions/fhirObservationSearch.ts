/**
 * GET /fhir/Observation?patient=&category=&code=&date=&_count=&_page_token=  (scope interop:export:fhir)
 * A searchset Bundle of the patient's Observations: lab Observations (category laboratory, newest
 * result first), then assessments (category survey). `patient` is required (`<id>` or `Patient/<id>`);
 * `category` and `code` are tokens (`code`, `system|code`, `|code`, `system|`; a comma is OR); `date`
 * is `[eq|ne|gt|lt|ge|le|sa|eb]YYYY[-MM[-DD[Thh:mm[:ss][zone]]]]`, repeated for AND, on effective[x].
 * An id that is no chart patient has no matches (an empty Bundle, as an unused id).
 * 200 the Bundle | 400 missing `patient`, a bad value, `_count` or `_page_token`, any other parameter |
 * 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 * A patient the partner's patient access does not reach (docs/write-authority.md "Relationships"): the
 * policy 403, decided before any chart lookup, the same for a patient that does not exist.
 */
import { fhirObservationSearchRoute } from '../lib/config/service';
import { fhirEndpoint, fhirBaseUrl, fhirResponse, requireFhirAcceptable } from '../lib/http/fhir';
import { readFhirQuery } from '../lib/http/fhir-query';
import { fhirLabDependencies } from '../lib/exports/fhir-export-wiring';
import { searchObservations } from '../lib/exports/fhir-search';
import { requirePatientReadable } from '../lib/http/patient-gate';
import { patientIdOf } from '../lib/fhir/logical-id';

export const handler = fhirEndpoint(fhirObservationSearchRoute, async (request) => {
  const query = readFhirQuery(request.event, ['patient', 'category', 'code', 'date', '_count', '_page_token']);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.observation.search' });
  const named = patientIdOf(query.patient!);
  if (named !== undefined) await requirePatientReadable(request, named);
  const search = { ...query, patient: query.patient!, baseUrl: fhirBaseUrl(request.event), now: request.now };
  const { patientId, bundle, records } = await searchObservations(fhirLabDependencies(), search);
  request.audit({
    action: 'fhir.observation.search',
    ...(records > 0 ? { patientId } : {}),
    resourceIds: { count: String(query.count), records: String(records) },
  });
  return fhirResponse(bundle);
});
