/**
 * Wiring of FHIR DiagnosticReport intake (POST /fhir/DiagnosticReport, and the reports of POST /fhir)
 * from the environment: the services of HL7 ORU intake it uses (lib/intake/receive-hl7-wiring.ts):
 * the lab result writer, patient resolution (chart patients read by id, the MRN index, partner
 * identities, the owners of assigning authorities), held records, the idempotency table. Only what a
 * report can run: no chart writer (ChartStore: notes, merges are HL7 ADT/MDM intake's), no form intake.
 */
import { dynamoDbClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { ChartItemReader } from '../chart/chart-reader';
import { tableName } from '../dynamo/table-names';
import { HeldRecordHolder } from '../intake/held-records';
import { MrnIndex } from '../intake/mrn-index';
import { PartnerIdentityStore } from '../intake/partner-identities';
import { accessRecordMaxAgeSeconds, CachedAuthorityOwners } from '../keys/access-records';
import { AuthorityOwnerReader } from '../keys/authority-owner-reader';
import { chartAssigningAuthority } from '../keys/chart-authority';
import { IdempotencyStore } from '../results/idempotency';
import { receiveDependencies } from '../results/result-wiring';
import type { LabReportEntryDependencies } from './lab-report-entries';
import { labReportEntries } from './lab-report-entries';
import type { FhirIntakeDependencies } from './receive-fhir';

/** Authority owners, kept for the container's life under the access-record bound (lib/keys/access-records.ts), as HL7 intake keeps them. */
const authorityOwners = new ContainerCache<CachedAuthorityOwners>();

/** What a DiagnosticReport entry reads and writes, with the idempotency table of the request. */
export function labReportEntryDependencies(): LabReportEntryDependencies & { idempotency: IdempotencyStore } {
  const db = dynamoDbClient();
  const chart = new ChartItemReader(db, tableName('chart'));
  const labResults = receiveDependencies();
  const owners = authorityOwners.get(
    [db, tableName('keys'), accessRecordMaxAgeSeconds()],
    ([client, table, age]) => new CachedAuthorityOwners(new AuthorityOwnerReader(client, table), age),
  );
  return {
    keys: labResults.keys,
    labResults,
    idempotency: new IdempotencyStore(db, tableName('idempotency')),
    mrnIndex: new MrnIndex(db, tableName('chart')),
    chart: { getPatient: (patientId) => chart.getPatient(patientId) },
    identities: new PartnerIdentityStore(db, tableName('chart')),
    held: new HeldRecordHolder(db, tableName('chart')),
    authorities: {
      chart: chartAssigningAuthority(),
      ownerOf: (authority) => owners.ownerOf(authority, new Date()),
    },
  };
}

export function fhirDiagnosticReportIntakeDependencies(): FhirIntakeDependencies {
  const lab = labReportEntryDependencies();
  return { keys: lab.keys, idempotency: lab.idempotency, entries: { DiagnosticReport: labReportEntries(lab) } };
}
