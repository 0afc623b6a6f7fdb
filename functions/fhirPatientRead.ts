/**
 * GET /fhir/Patient/{id}  (scope interop:export:fhir) — the patient's demographics as an R4 Patient
 * (US Core-style: MRN identifier, name, telecom, gender, birthDate, address, race/ethnicity).
 * 400 malformed id or unsupported parameter, 404 unknown patient, 406 when Accept excludes FHIR JSON;
 * errors are OperationOutcome.
 */
import { fhirPatientReadRoute } from '../lib/config/service';
import { fhirEndpoint, fhirResponse, rejectFhirQueryParameters, requireFhirAcceptable, requireLogicalIdParameter } from '../lib/http/fhir';
import { fhirChartDependencies } from '../lib/exports/fhir-export-wiring';
import { readPatient } from '../lib/exports/fhir-exports';

export const handler = fhirEndpoint(fhirPatientReadRoute, async (request) => {
  const id = requireLogicalIdParameter(request.event);
  rejectFhirQueryParameters(request.event);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.patient.read' });
  const { patientId, resource } = await readPatient(fhirChartDependencies(), id);
  request.audit({ action: 'fhir.patient.read', patientId });
  return fhirResponse(resource);
});
