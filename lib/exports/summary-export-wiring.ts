import { ContainerCache } from '../aws/container-cache';
import { labResultSummaryReader } from '../results/summary-reader-wiring';
import type { PatientSummaryExportDependencies } from './chart-exports';
import { chartReaderDependencies } from './chart-export-wiring';

const cache = new ContainerCache<PatientSummaryExportDependencies>();

/**
 * The summary export also reads the patient's recent lab results (decrypted summaries; no S3
 * access). Kept apart from the other exports so their bundles carry no KMS client.
 */
export function summaryExportDependencies(): PatientSummaryExportDependencies {
  return cache.get([chartReaderDependencies(), labResultSummaryReader()], ([chart, results]) => ({
    ...chart,
    labResultsPage: (patientId, limit, before) => results.resultsForPatientPage(patientId, limit, before),
  }));
}
