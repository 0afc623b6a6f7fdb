/**
 * GET /fhir/Observation/{id}  (scope interop:export:fhir) — an assessment (`<patient>..<assessment>`:
 * category survey; items as components, total as the value) or a lab Observation
 * (`<patient>..<result>..<n>`: the n-th test of a lab result, category laboratory, as its
 * DiagnosticReport contains it). The record is read under the patient the id names, and a lab
 * result only for a chart patient, so another patient's record, an unknown record, a result filed
 * under an id that is no chart patient and an id of the wrong shape are the same 404.
 * 400 malformed id or unsupported parameter, 404 as above, 406 when Accept excludes FHIR JSON;
 * errors are OperationOutcome.
 * A record of a patient the partner's patient access does not reach (docs/write-authority.md
 * "Relationships") is the same 404 as an unknown id, decided before any chart lookup.
 */
import { fhirObservationReadRoute } from '../lib/config/service';
import { fhirEndpoint, fhirResponse, rejectFhirQueryParameters, requireFhirAcceptable, requireLogicalIdParameter } from '../lib/http/fhir';
import { fhirLabDependencies } from '../lib/exports/fhir-export-wiring';
import { readAssessmentObservation } from '../lib/exports/fhir-exports';
import { readLabObservation } from '../lib/exports/fhir-search';
import { requireRecordPatientReadable } from '../lib/http/patient-gate';
import { recordIdsOf } from '../lib/fhir/logical-id';
import { labObservationIdsOf } from '../lib/fhir/lab-observation';

export const handler = fhirEndpoint(fhirObservationReadRoute, async (request) => {
  const id = requireLogicalIdParameter(request.event);
  rejectFhirQueryParameters(request.event);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.observation.read' });
  // a lab Observation's id (lib/fhir/lab-observation.ts) and an assessment's both carry the patient
  await requireRecordPatientReadable(request, labObservationIdsOf(id)?.patientId ?? recordIdsOf(id)?.patientId, 'Observation');
  const deps = fhirLabDependencies();
  const lab = await readLabObservation(deps, id);
  if (lab) {
    request.audit({ action: 'fhir.result.observation.read', patientId: lab.patientId, resourceIds: { resultId: lab.recordId } });
    return fhirResponse(lab.resource);
  }
  const { patientId, recordId, resource } = await readAssessmentObservation(deps, id);
  request.audit({ action: 'fhir.assessment.read', patientId, resourceIds: { assessmentId: recordId } });
  return fhirResponse(resource);
});
