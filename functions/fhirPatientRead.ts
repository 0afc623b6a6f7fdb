/**
 * GET /fhir/Patient/{id}  (scope interop:export:fhir) — the patient's demographics as an R4 Patient
 * (US Core-style: MRN identifier, name, telecom, gender, birthDate, address, race/ethnicity).
 * 400 malformed id or unsupported parameter, 404 unknown patient, 406 when Accept excludes FHIR JSON;
 * errors are OperationOutcome.
 * A patient the partner's patient access does not reach (docs/write-authority.md "Relationships"): the
 * policy 403, decided before any chart lookup, the same for a patient that does not exist.
 */
import { fhirPatientReadRoute } from '../lib/config/service';
import { fhirEndpoint, fhirResponse, rejectFhirQueryParameters, requireFhirAcceptable, requireLogicalIdParameter } from '../lib/http/fhir';
import { fhirChartDependencies } from '../lib/exports/fhir-export-wiring';
import { readPatient } from '../lib/exports/fhir-exports';
import { requirePatientReadable } from '../lib/http/patient-gate';
import { patientIdOf } from '../lib/fhir/logical-id';

export const handler = fhirEndpoint(fhirPatientReadRoute, async (request) => {
  const id = requireLogicalIdParameter(request.event);
  rejectFhirQueryParameters(request.event);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.patient.read' });
  const named = patientIdOf(id);
  if (named !== undefined) await requirePatientReadable(request, named);
  const { patientId, resource } = await readPatient(fhirChartDependencies(), id);
  request.audit({ action: 'fhir.patient.read', patientId });
  return fhirResponse(resource);
});
