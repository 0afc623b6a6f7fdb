import { labResultSummaryReader } from '../results/reader-services';
import { chartExportDependencies } from './export-dependencies';
import type { FhirExportDependencies } from './fhir-exports';

/** Chart-only FHIR reads (Patient, Encounter, DocumentReference, Observation): no KMS client. */
export function fhirChartDependencies(): FhirExportDependencies {
  return chartExportDependencies();
}

let cached: { chart: unknown; results: unknown; deps: FhirExportDependencies } | undefined;

/** FHIR reads that include lab results ($everything, DiagnosticReport): results table + KMS Decrypt, no S3. */
export function fhirLabDependencies(): FhirExportDependencies {
  const chart = chartExportDependencies();
  const results = labResultSummaryReader();
  if (!cached || cached.chart !== chart || cached.results !== results) {
    cached = {
      chart,
      results,
      deps: {
        chart: chart.chart,
        labs: {
          page: (patientId, limit, before) => results.resultsForPatientPage(patientId, limit, before),
          one: (patientId, resultId) => results.currentSummaryForPatient(patientId, resultId),
        },
      },
    };
  }
  return cached.deps;
}
