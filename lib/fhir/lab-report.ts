/**
 * A lab result (the decrypted summary the HL7 patient summary also reads) as a DiagnosticReport
 * with its Observations contained (one per test), so one read returns the report and its results.
 *
 *   status        preliminary | final | corrected | amended | cancelled (same words in both)
 *   category      v2-0074 LAB;  code: local LAB "Laboratory result" (the summary carries no order code)
 *   identifier    the accession number (type ACSN);  issued: ResultedDateUTC
 *   Observation   code.text = test name (no test code is submitted); value: a Quantity when the result
 *                 is a plain decimal whose JSON number prints back identically ("98", "5.4"), else the
 *                 exact text as valueString ("98.0", "<5", "positive"), so no digit is lost or added;
 *                 unit as submitted; referenceRange.text; status as the report's.
 */
import type { DiagnosticReport, Observation } from '@medplum/fhirtypes';
import { logicalId } from './logical-id';
import { numericValue } from './numeric';
import { patientReference } from './chart-resources';
import { Systems } from './terminology';
import { fhirString, nonEmpty, present } from './text';

/** What the service knows of a lab result when exporting it (structurally the stored summary). */
export interface LabResultRecord {
  resultId: string;
  accessionNumber: string;
  status: 'preliminary' | 'final' | 'corrected' | 'amended' | 'cancelled';
  /** ISO 8601 UTC instant */
  resultedAt: string;
  results: Array<{ testName: string; result: string; units?: string; referenceRange?: string }>;
  /** long values or results beyond the summary budget were left out */
  truncated?: boolean;
  /** provenance: the lab's sender id (senderID / MSH-4): the performer */
  senderId?: string;
}

function testObservation(patientId: string, lab: LabResultRecord, test: LabResultRecord['results'][number], index: number): Observation {
  const numeric = numericValue(test.result);
  const unit = fhirString(test.units);
  const range = fhirString(test.referenceRange);
  return {
    resourceType: 'Observation',
    id: `result-${index + 1}`,
    status: lab.status,
    category: [{ coding: [{ system: Systems.observationCategory, code: 'laboratory', display: 'Laboratory' }] }],
    code: { text: fhirString(test.testName) ?? 'Unnamed test' },
    subject: patientReference(patientId),
    issued: lab.resultedAt,
    ...(numeric !== undefined ? { valueQuantity: { value: numeric, ...present('unit', unit) } } : present('valueString', fhirString(test.result))),
    ...nonEmpty('referenceRange', range === undefined ? [] : [{ text: range }]),
  };
}

export function labDiagnosticReport(patientId: string, lab: LabResultRecord): DiagnosticReport {
  const observations = lab.results.map((test, i) => testObservation(patientId, lab, test, i));
  return {
    resourceType: 'DiagnosticReport',
    id: logicalId(patientId, lab.resultId),
    ...(observations.length ? { contained: observations } : {}),
    identifier: [
      { type: { coding: [{ system: Systems.v2IdentifierType, code: 'ACSN', display: 'Accession ID' }] }, ...present('value', fhirString(lab.accessionNumber)) },
    ],
    status: lab.status,
    category: [{ coding: [{ system: Systems.v2DiagnosticService, code: 'LAB', display: 'Laboratory' }] }],
    code: { coding: [{ code: 'LAB', display: 'Laboratory result' }], text: 'Laboratory result' },
    subject: patientReference(patientId),
    issued: lab.resultedAt,
    // provenance: the sending lab as the performing organization (by name: it is a partner's sender id, not a resource here)
    ...(fhirString(lab.senderId) !== undefined ? { performer: [{ display: fhirString(lab.senderId)! }] } : {}),
    ...(observations.length ? { result: observations.map((o) => ({ reference: `#${o.id}` })) } : {}),
    ...(lab.truncated ? { conclusion: 'Some long values or results were left out of this summary.' } : {}),
  };
}
