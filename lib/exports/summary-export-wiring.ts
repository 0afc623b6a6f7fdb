import { ContainerCache } from '../aws/container-cache';
import { labResultSummaryReader } from '../results/summary-reader-wiring';
import type { ChartExportDependencies } from './chart-exports';
import { chartExportDependencies } from './chart-export-wiring';

const cache = new ContainerCache<ChartExportDependencies>();

/**
 * The summary export also reads the patient's recent lab results (decrypted summaries; no S3
 * access). Kept apart from the other exports so their bundles carry no KMS client.
 */
export function summaryExportDependencies(): ChartExportDependencies {
  return cache.get([chartExportDependencies(), labResultSummaryReader()], ([chart, results]) => ({
    ...chart,
    labResultsPage: (patientId, limit, before) => results.resultsForPatientPage(patientId, limit, before),
  }));
}
