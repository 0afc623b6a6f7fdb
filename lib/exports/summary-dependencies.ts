import { labResultSummaryReader } from '../results/reader-services';
import type { ChartExportDependencies } from './chart-exports';
import { chartExportDependencies } from './export-dependencies';

let cached: ChartExportDependencies | undefined;

/**
 * The summary export also reads the patient's recent lab results (decrypted summaries; no S3
 * access). Kept apart from the other exports so their bundles carry no KMS client.
 */
export function summaryExportDependencies(): ChartExportDependencies {
  if (!cached) {
    const results = labResultSummaryReader();
    cached = { ...chartExportDependencies(), recentLabResults: (patientId, limit) => results.recentResultsForPatient(patientId, limit) };
  }
  return cached;
}
