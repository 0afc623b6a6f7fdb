/**
 * GET /fhir/Patient?identifier=system|value&_id=  (scope interop:export:fhir) — how a FHIR client
 * finds a patient by MRN: a searchset Bundle of the chart patients matching every parameter sent
 * (0 or 1 for an identifier). `identifier` is the Patient's MRN identifier, `system|value` with the
 * system as the Patient resource writes it (`urn:interop:mrn:<assigning authority>`; MRN and
 * authority compared normalised); `_id` one to ten Patient ids, comma-separated (OR). Read through
 * the chart's MRN index: one GetItem of the index and one GetItem of the patient; no scans.
 * 200 the Bundle | 400 neither parameter, an identifier without a system, a bad `_id`, any other
 * parameter | 406 when Accept excludes FHIR JSON; errors are OperationOutcome.
 * Patients the partner's patient access does not reach (docs/write-authority.md "Relationships")
 * are no match, the same as an identifier no patient holds.
 */
import { fhirPatientSearchRoute } from '../lib/config/service';
import { fhirEndpoint, fhirBaseUrl, fhirResponse, requireFhirAcceptable } from '../lib/http/fhir';
import { readFhirQuery } from '../lib/http/fhir-query';
import { fhirPatientSearchDependencies } from '../lib/exports/fhir-export-wiring';
import { searchPatients } from '../lib/exports/fhir-search';
import { readablePatients } from '../lib/http/patient-gate';

export const handler = fhirEndpoint(fhirPatientSearchRoute, async (request) => {
  const query = readFhirQuery(request.event, ['identifier', '_id', '_count']);
  requireFhirAcceptable(request.event);
  request.audit({ action: 'fhir.patient.search' });
  const readable = (patientIds: string[]) => readablePatients(request, patientIds);
  const search = { ...query, baseUrl: fhirBaseUrl(request.event), now: request.now, readable };
  const { patientIds, bundle } = await searchPatients(fhirPatientSearchDependencies(), search);
  request.audit({
    action: 'fhir.patient.search',
    ...(patientIds.length === 1 ? { patientId: patientIds[0] } : {}),
    resourceIds: { records: String(patientIds.length) },
  });
  return fhirResponse(bundle);
});
