/**
 * Wiring of FHIR DiagnosticReport intake (POST /fhir/DiagnosticReport, and the reports of POST /fhir)
 * from the environment: the services of HL7 ORU intake it uses (lib/intake/receive-hl7-wiring.ts):
 * the lab result writer, patient resolution (chart patients read by id, the MRN index, partner
 * identities, the owners of assigning authorities), held records, the idempotency table. Only what a
 * report can run: no chart writer (ChartStore: notes, merges are HL7 ADT/MDM intake's), no form intake.
 */
import { dynamoDbClient } from '../aws/clients';
import { ChartItemReader } from '../chart/chart-reader';
import { tableName } from '../dynamo/table-names';
import { intakeAuthorities } from '../intake/authority-wiring';
import { HeldRecordHolder } from '../intake/held-records';
import { MrnIndex } from '../intake/mrn-index';
import { PartnerIdentityStore } from '../intake/partner-identities';
import { relationshipLookup } from '../relationships/relationship-wiring';
import { IdempotencyStore } from '../results/idempotency';
import { receiveDependencies } from '../results/result-wiring';
import type { LabReportEntryDependencies } from './lab-report-entries';
import { labReportEntries } from './lab-report-entries';
import type { FhirIntakeDependencies } from './receive-fhir';

/** What a DiagnosticReport entry reads and writes, with the idempotency table of the request. */
export function labReportEntryDependencies(): LabReportEntryDependencies & { idempotency: IdempotencyStore } {
  const db = dynamoDbClient();
  const chart = new ChartItemReader(db, tableName('chart'));
  const labResults = receiveDependencies();
  return {
    keys: labResults.keys,
    labResults,
    idempotency: new IdempotencyStore(db, tableName('idempotency')),
    mrnIndex: new MrnIndex(db, tableName('chart')),
    chart: { getPatient: (patientId) => chart.getPatient(patientId) },
    identities: new PartnerIdentityStore(db, tableName('chart')),
    held: new HeldRecordHolder(db, tableName('chart')),
    authorities: intakeAuthorities(db),
    relationships: relationshipLookup,
  };
}

export function fhirDiagnosticReportIntakeDependencies(): FhirIntakeDependencies {
  const lab = labReportEntryDependencies();
  return { keys: lab.keys, idempotency: lab.idempotency, entries: { DiagnosticReport: labReportEntries(lab) } };
}
