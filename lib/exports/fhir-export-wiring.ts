import { ContainerCache } from '../aws/container-cache';
import { labResultSummaryReader } from '../results/summary-reader-wiring';
import { chartExportDependencies } from './chart-export-wiring';
import type { FhirExportDependencies } from './fhir-exports';

/** Chart-only FHIR reads (Patient, Encounter, DocumentReference, Observation): no KMS client. */
export function fhirChartDependencies(): FhirExportDependencies {
  return chartExportDependencies();
}

const cache = new ContainerCache<FhirExportDependencies>();

/** FHIR reads that include lab results ($everything, DiagnosticReport): results table + KMS Decrypt, no S3. */
export function fhirLabDependencies(): FhirExportDependencies {
  return cache.get([chartExportDependencies(), labResultSummaryReader()], ([chart, results]) => ({
    chart: chart.chart,
    labs: {
      page: (patientId, limit, before) => results.resultsForPatientPage(patientId, limit, before),
      one: (patientId, resultId) => results.currentSummaryForPatient(patientId, resultId),
    },
  }));
}
