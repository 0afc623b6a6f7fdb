import { dynamoDbClient, kmsClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { tableName } from '../dynamo/table-names';
import { MrnIndex } from '../intake/mrn-index';
import { chartIdentifierKey } from '../intake/patient-resolution';
import { readResultKeys } from '../results/lookup-keys';
import { labResultSummaryReader } from '../results/summary-reader-wiring';
import { chartReaderDependencies } from './chart-export-wiring';
import type { FhirExportDependencies } from './fhir-exports';
import type { PatientIdentifierIndex } from './fhir-search';

/** Chart-only FHIR reads (Patient, Encounter, DocumentReference, Observation): no KMS client. */
export function fhirChartDependencies(): FhirExportDependencies {
  return chartReaderDependencies();
}

const cache = new ContainerCache<FhirExportDependencies>();

/** FHIR reads that include lab results ($everything, DiagnosticReport): results table + KMS Decrypt, no S3. */
export function fhirLabDependencies(): FhirExportDependencies {
  return cache.get([chartReaderDependencies(), labResultSummaryReader()], ([chart, results]) => ({
    chart: chart.chart,
    labs: {
      page: (patientId, limit, before) => results.resultsForPatientPage(patientId, limit, before),
      one: (patientId, resultId) => results.currentSummaryForPatient(patientId, resultId),
    },
  }));
}

const patientCache = new ContainerCache<FhirExportDependencies & { identifiers: PatientIdentifierIndex }>();

/**
 * Patient?identifier=: the chart and its MRN index. The index key is the keyed hash of the normalised
 * (authority, MRN) (lib/intake/patient-resolution.ts chartIdentifierKey), under the deployment's lookup
 * key (read from the results table and unwrapped with KMS Decrypt once per container; never created
 * here: without one no MRN was ever indexed). Then one GetItem of the index.
 */
export function fhirPatientSearchDependencies(): FhirExportDependencies & { identifiers: PatientIdentifierIndex } {
  return patientCache.get([chartReaderDependencies(), dynamoDbClient(), kmsClient()], ([chart, db, kms]) => {
    const index = new MrnIndex(db, tableName('chart'));
    const source = { db, table: tableName('results'), kms };
    return {
      chart: chart.chart,
      identifiers: {
        find: async (authority, mrn) => {
          const keys = await readResultKeys(source);
          return keys ? index.find(chartIdentifierKey(keys, authority, mrn)) : undefined;
        },
      },
    };
  });
}
