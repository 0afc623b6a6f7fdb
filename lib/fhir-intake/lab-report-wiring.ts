/**
 * Wiring of POST /fhir/DiagnosticReport from the environment: the HL7 intake's services (the lab
 * result writer, patient resolution, held records, idempotency table). No form intake: this route
 * takes lab results only.
 */
import { receiveHl7Dependencies } from '../intake/receive-hl7-wiring';
import { labReportEntries } from './lab-report-entries';
import type { FhirIntakeDependencies } from './receive-fhir';

export function fhirDiagnosticReportIntakeDependencies(): FhirIntakeDependencies {
  const lab = receiveHl7Dependencies();
  return { keys: lab.keys, idempotency: lab.idempotency, entries: { DiagnosticReport: labReportEntries(lab) } };
}
