/**
 * GET /fhir/Encounter?patient=&_count=&_page_token=  (scope interop:export:fhir)
 * A searchset Bundle of the patient's Encounter resources, in id order, `_count` per page (1-200,
 * default 20), a `next` link while more remain. `patient` is required (`<id>` or `Patient/<id>`);
 * an unknown patient has no matches (an empty Bundle). Any other parameter is a 400.
 * 200 the Bundle | 400 missing `patient`, a bad `_count` or `_page_token`, another parameter |
 * 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 * A patient the partner's patient access does not reach (docs/write-authority.md "Relationships"): the
 * policy 403, decided before any chart lookup, the same for a patient that does not exist.
 */
import { fhirEncounterSearchRoute } from '../lib/config/service';
import { fhirEndpoint, fhirBaseUrl, fhirResponse, requireFhirAcceptable } from '../lib/http/fhir';
import { readFhirPagingQuery } from '../lib/http/fhir-query';
import { fhirChartDependencies } from '../lib/exports/fhir-export-wiring';
import { searchChartRecords } from '../lib/exports/fhir-exports';
import { requirePatientReadable } from '../lib/http/patient-gate';
import { patientIdOf } from '../lib/fhir/logical-id';

export const handler = fhirEndpoint(fhirEncounterSearchRoute, async (request) => {
  const query = readFhirPagingQuery(request.event, ['patient', '_count', '_page_token']);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.encounter.search' });
  const named = patientIdOf(query.patient!);
  if (named !== undefined) await requirePatientReadable(request, named);
  const search = { patient: query.patient!, count: query.count, pageToken: query.pageToken, baseUrl: fhirBaseUrl(request.event), now: request.now };
  const { patientId, bundle, records } = await searchChartRecords(fhirChartDependencies(), 'Encounter', search);
  request.audit({
    action: 'fhir.encounter.search',
    ...(records > 0 ? { patientId } : {}),
    resourceIds: { count: String(query.count), records: String(records) },
  });
  return fhirResponse(bundle);
});
