/**
 * POST /fhir/QuestionnaireResponse: one completed form as a FHIR R4 QuestionnaireResponse (SDC), the
 * Patient contained; it runs the form intake of POST /receiveFormIntakeScope (matching, inbox).
 *
 *   scope     interop:ingest:fhir (endpoint list, lib/config/service.ts)
 *   body      application/fhir+json (or application/json), <= 4 MiB
 *   domain    receiveFhir (lib/fhir-intake/receive-fhir.ts) with questionnaire-response-entries.ts -> receiveFormPacket (lib/forms/intake.ts)
 *   answer    201 OperationOutcome (information: the packetId), 200 the same submission again; the same
 *             answer wherever the packet went. 400 OperationOutcome with issue.expression; 403 a form source
 *             the partner does not own; 409 the submission id with other content; 413 / 415; 503 + Retry-After
 */
import { receiveFhirQuestionnaireResponseRoute } from '../lib/config/service';
import { fhirEndpoint } from '../lib/http/fhir';
import { handleFhirIntake } from '../lib/http/fhir-intake';
import { fhirQuestionnaireResponseIntakeDependencies } from '../lib/fhir-intake/questionnaire-response-wiring';

export const handler = fhirEndpoint(receiveFhirQuestionnaireResponseRoute, (request) =>
  handleFhirIntake('QuestionnaireResponse', request, fhirQuestionnaireResponseIntakeDependencies()),
);
