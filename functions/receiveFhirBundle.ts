/**
 * POST /fhir: a FHIR R4 `transaction` or `batch` Bundle of DiagnosticReports (lab results, with their
 * Observations, Specimen and Patient as entries or contained) and QuestionnaireResponses (forms).
 *
 *   scope     interop:ingest:fhir (endpoint list, lib/config/service.ts)
 *   body      application/fhir+json (or application/json), <= 4 MiB, at most 100 entries, each request POST
 *   domain    receiveFhir (lib/fhir-intake/receive-fhir.ts)
 *   answer    200 transaction-response / batch-response Bundle (entry.response status, location, outcome);
 *             a transaction with any refused entry: 400 / 403 / 409 / 413 OperationOutcome (issue.expression
 *             per failing element), nothing stored; 409 Bundle.identifier reused with other content;
 *             503 + Retry-After when a dependency is unavailable (send the same Bundle again)
 */
import { receiveFhirBundleRoute } from '../lib/config/service';
import { fhirEndpoint } from '../lib/http/fhir';
import { handleFhirIntake } from '../lib/http/fhir-intake';
import { fhirIntakeDependencies } from '../lib/fhir-intake/receive-fhir-wiring';

export const handler = fhirEndpoint(receiveFhirBundleRoute, (request) => handleFhirIntake('Bundle', request, fhirIntakeDependencies()));
