/**
 * THE way chart patients are written: every writer (the chart import CLI, local and deployed; the
 * local stack's demo load; `npm run reindex`; the inbound HL7 ADT intake) goes through
 * ChartPatientWriter, so the form-matching index (match-index.ts) is kept in step in the same
 * command. Writing the chart first and indexing second means a crash between the two leaves a
 * patient the matcher cannot find yet (review catches the packet; re-running the import or
 * `npm run reindex` repairs it), never an index entry for a patient that is not in the chart.
 *
 *   const writer = chartPatientWriter(chartStore, formsDeps);
 *   await importChart(writer, doc);          // entries + index
 *   await writer.putPatient(patient);        // one patient (ADT upsert) + index
 */
import type { ChartEntry, ChartStore } from '../chart/chart-store';
import type { ChartEntryWriter, ChartPatientIndex } from '../chart/chart-import';
import type { Patient } from '../chart/types';
import type { FormsDependencies } from './forms-dependencies';
import { indexPatientsForMatching } from './match-index';

export class ChartPatientWriter implements ChartEntryWriter {
  constructor(
    private readonly chart: Pick<ChartStore, 'putAll'>,
    private readonly deps: Pick<FormsDependencies, 'store' | 'keys'>,
    private readonly now: () => Date = () => new Date(),
    /** more indexes of chart patients to keep in step (the HL7 intake's MRN index) */
    private readonly indexes: readonly ChartPatientIndex[] = [],
  ) {}

  /** Upserts chart entries, then re-indexes every patient among them. Returns the items written. */
  async putAll(entries: readonly ChartEntry[]): Promise<number> {
    const items = await this.chart.putAll(entries);
    const patients = entries.flatMap((e) => (e.kind === 'patient' ? [e.record] : []));
    if (patients.length > 0) {
      const now = this.now();
      await indexPatientsForMatching(patients, { deps: this.deps, now });
      for (const index of this.indexes) await index.indexPatients(patients, now);
    }
    return items;
  }

  /** The indexes this writer keeps in step beside the form-matching index. */
  get indexNames(): string[] {
    return this.indexes.map((index) => index.name);
  }

  /** Upserts one patient (demographics) and re-indexes it. */
  async putPatient(patient: Patient): Promise<void> {
    await this.putAll([{ kind: 'patient', record: patient }]);
  }
}

export function chartPatientWriter(chart: Pick<ChartStore, 'putAll'>, deps: Pick<FormsDependencies, 'store' | 'keys'>): ChartPatientWriter {
  return new ChartPatientWriter(chart, deps);
}
