/**
 * Synthetic demo chart for the local stack and tests (lib/local/demo-chart.json): five made-up
 * patients, no real person. Loading is idempotent: every write is an upsert of the same items.
 * Local use only; no deployed function imports this module.
 */
import demoChart from '../local/demo-chart.json';
import { importChart, type ChartEntryWriter, type ChartImportCounts } from './chart-import';

/** Ids in the demo chart that tests and local scripts refer to. */
export const DemoChartIds = {
  /** full demographics; 3 encounters, 3 notes, 2 assessments (PHQ-9 and a mixed text/coded one) */
  patient1: 'demo-patient-1',
  encounter1: 'demo-encounter-1',
  note1: 'demo-note-1',
  assessment1: 'demo-assessment-1',
  /** non-ASCII family name; note text with HL7 delimiters, line breaks and non-ASCII letters */
  patient2: 'demo-patient-2',
  encounter2: 'demo-encounter-2',
  note2: 'demo-note-2',
  assessment2: 'demo-assessment-2',
  /** two different patients with the same name and birth date */
  patient3: 'demo-patient-3',
  patient4: 'demo-patient-4',
  /** a patient without records */
  patient5: 'demo-patient-5',
} as const;

/** The demo chart document as shipped (validated when loaded). */
export function demoChartDocument(): unknown {
  return structuredClone(demoChart);
}

/** Loads the demo chart through `writer` (the local stack passes the ChartPatientWriter, which also indexes). */
export async function loadDemoChart(store: ChartEntryWriter): Promise<ChartImportCounts> {
  const result = await importChart(store, demoChartDocument());
  if (!result.ok) {
    throw new Error(`lib/local/demo-chart.json is invalid at ${result.errors.map((e) => e.pointer).join(', ')}`);
  }
  return result.counts;
}
