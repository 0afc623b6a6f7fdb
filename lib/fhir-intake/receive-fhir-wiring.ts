/**
 * Wiring of POST /fhir (a Bundle of DiagnosticReports and QuestionnaireResponses) from the
 * environment: the lab intake's services (the lab result writer, patient resolution, held records,
 * idempotency table: lab-report-wiring.ts), the form intake's parts and the Bundle rules
 * (bundle-intake.ts). The single-resource routes
 * have their own wiring (lab-report-wiring.ts, questionnaire-response-wiring.ts), so each bundles
 * only its own intake.
 */
import { answerBundle } from './bundle-intake';
import { labReportEntries } from './lab-report-entries';
import { labReportEntryDependencies } from './lab-report-wiring';
import { questionnaireResponseEntries } from './questionnaire-response-entries';
import { formIntakeDependencies } from './questionnaire-response-wiring';
import type { FhirIntakeDependencies } from './receive-fhir';

export function fhirIntakeDependencies(): FhirIntakeDependencies {
  const lab = labReportEntryDependencies();
  return {
    keys: lab.keys,
    idempotency: lab.idempotency,
    entries: { DiagnosticReport: labReportEntries(lab), QuestionnaireResponse: questionnaireResponseEntries(formIntakeDependencies()) },
    bundleIntake: answerBundle,
  };
}
