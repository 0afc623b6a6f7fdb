/**
 * GET /fhir/Patient/{id}/$everything?_count=&_page_token=  (scope interop:export:fhir)
 * A searchset Bundle: the Patient (first page), then the same records as the HL7 patient summary
 * (Encounter, DocumentReference, assessment Observation, lab DiagnosticReport), newest first,
 * `_count` per page (1-200, default 20), a `next` link while more remain.
 * 200 the Bundle | 400 malformed id, `_count` or `_page_token` (InvalidParameterError) | 404 unknown
 * patient (RecordNotFoundError) | 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 * A patient the partner's patient access does not reach (docs/write-authority.md "Relationships"): the
 * policy 403, decided before any chart lookup, the same for a patient that does not exist.
 */
import { fhirPatientEverythingRoute } from '../lib/config/service';
import { fhirEndpoint, fhirBaseUrl, fhirResponse, requireFhirAcceptable, requireLogicalIdParameter } from '../lib/http/fhir';
import { readFhirPagingQuery } from '../lib/http/fhir-query';
import { fhirLabDependencies } from '../lib/exports/fhir-export-wiring';
import { patientEverything } from '../lib/exports/fhir-exports';
import { requirePatientReadable } from '../lib/http/patient-gate';
import { patientIdOf } from '../lib/fhir/logical-id';

export const handler = fhirEndpoint(fhirPatientEverythingRoute, async (request) => {
  const id = requireLogicalIdParameter(request.event);
  const query = readFhirPagingQuery(request.event, ['_count', '_page_token']);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.patient.everything' });
  const named = patientIdOf(id);
  if (named !== undefined) await requirePatientReadable(request, named);
  const { patientId, bundle, records } = await patientEverything(fhirLabDependencies(), {
    patient: id,
    count: query.count,
    pageToken: query.pageToken,
    baseUrl: fhirBaseUrl(request.event),
    now: request.now,
  });
  request.audit({ action: 'fhir.patient.everything', patientId, resourceIds: { count: String(query.count), records: String(records) } });
  return fhirResponse(bundle);
});
