/**
 * POST /fhir/DiagnosticReport: one lab result as a FHIR R4 DiagnosticReport (US Core Laboratory), its
 * Observations (and Specimen, Patient) contained.
 *
 *   scope     interop:ingest:fhir (endpoint list, lib/config/service.ts)
 *   body      application/fhir+json (or application/json), <= 4 MiB
 *   domain    receiveFhir (lib/fhir-intake/receive-fhir.ts) with lab-report-entries.ts: the lab result writer of HL7 ORU intake
 *   answer    201 OperationOutcome (information: the resultId), `Location: DiagnosticReport/<id>` when the
 *             subject is Patient/<chart id>; 200 the same content again (nothing new); the same answer
 *             whether or not the patient is known. 400 / 403 OperationOutcome with issue.expression;
 *             409 x-request-id reused with other content; 413 / 415; 503 + Retry-After
 */
import { receiveFhirDiagnosticReportRoute } from '../lib/config/service';
import { fhirEndpoint } from '../lib/http/fhir';
import { handleFhirIntake } from '../lib/http/fhir-intake';
import { fhirDiagnosticReportIntakeDependencies } from '../lib/fhir-intake/lab-report-wiring';

export const handler = fhirEndpoint(receiveFhirDiagnosticReportRoute, (request) =>
  handleFhirIntake('DiagnosticReport', request, fhirDiagnosticReportIntakeDependencies()),
);
