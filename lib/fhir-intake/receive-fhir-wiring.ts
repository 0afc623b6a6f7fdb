/**
 * Wiring of POST /fhir (a Bundle of DiagnosticReports and QuestionnaireResponses) from the
 * environment: the HL7 intake's services (the lab result writer, patient resolution, held records,
 * idempotency table) and the form intake's parts. The single-resource routes have their own wiring
 * (lab-report-wiring.ts, questionnaire-response-wiring.ts), so each bundles only its own intake.
 */
import { receiveHl7Dependencies } from '../intake/receive-hl7-wiring';
import { labReportEntries } from './lab-report-entries';
import { questionnaireResponseEntries } from './questionnaire-response-entries';
import { formIntakeDependencies } from './questionnaire-response-wiring';
import type { FhirIntakeDependencies } from './receive-fhir';

export function fhirIntakeDependencies(): FhirIntakeDependencies {
  const lab = receiveHl7Dependencies();
  return {
    keys: lab.keys,
    idempotency: lab.idempotency,
    entries: { DiagnosticReport: labReportEntries(lab), QuestionnaireResponse: questionnaireResponseEntries(formIntakeDependencies()) },
  };
}
