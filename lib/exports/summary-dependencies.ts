import { labResultSummaryReader } from '../results/reader-services';
import type { ChartExportDependencies } from './chart-exports';
import { chartExportDependencies } from './export-dependencies';

let cached: { chart: unknown; results: unknown; deps: ChartExportDependencies } | undefined;

/**
 * The summary export also reads the patient's recent lab results (decrypted summaries; no S3
 * access). Kept apart from the other exports so their bundles carry no KMS client.
 */
export function summaryExportDependencies(): ChartExportDependencies {
  const chart = chartExportDependencies();
  const results = labResultSummaryReader();
  if (!cached || cached.chart !== chart || cached.results !== results) {
    cached = { chart, results, deps: { ...chart, recentLabResults: (patientId, limit) => results.recentResultsForPatient(patientId, limit) } };
  }
  return cached.deps;
}
