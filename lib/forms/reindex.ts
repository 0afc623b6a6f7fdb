/**
 * `npm run reindex`: rebuilds the form-matching index from the chart table, for stages whose
 * patients were written before every writer kept the index in step (or to repair one after an
 * interrupted import).
 *
 * Pages through the chart's patient items (Scan filtered to sk PATIENT, `pageSize` items read per
 * page), re-indexes each page (indexPatientsForMatching: puts current keys, removes keys the
 * patient no longer has), then records the Scan position in the forms table
 * (CONFIG#reindex / progress). A run that stops (Ctrl-C, a crash, a throttled table) resumes from
 * the last completed page; a page done twice is harmless (every write is idempotent). A finished
 * run clears the position, so the next run starts over.
 */
import type { ChartPatientIndex } from '../chart/chart-import';
import type { ChartStore } from '../chart/chart-store';
import type { FormsDependencies } from './forms-dependencies';
import { indexPatientsForMatching } from './match-index';

export interface ReindexOptions {
  /** more indexes of chart patients to rebuild page by page (the HL7 intake's MRN index) */
  indexes?: readonly ChartPatientIndex[];
  chart: Pick<ChartStore, 'scanPatients'>;
  deps: Pick<FormsDependencies, 'store' | 'keys'>;
  /** chart items read per Scan page (default 200) */
  pageSize?: number;
  /** ignore a saved position and start from the beginning */
  restart?: boolean;
  /** stop after this many pages (leaves the position saved: the next run resumes) */
  maxPages?: number;
  onProgress?: (line: string) => void;
  now?: () => Date;
}

export interface ReindexResult {
  /** true when the whole chart was read */
  complete: boolean;
  resumed: boolean;
  pages: number;
  patients: number;
  indexed: number;
}

export async function reindexMatchIndex(options: ReindexOptions): Promise<ReindexResult> {
  const store = options.deps.store();
  const now = options.now ?? (() => new Date());
  const saved = options.restart ? undefined : await store.getReindexProgress();
  if (options.restart) await store.clearReindexProgress();
  let start = saved ? (JSON.parse(saved.lastKey) as Record<string, string>) : undefined;
  let pages = saved?.pages ?? 0;
  let patients = saved?.patients ?? 0;
  let indexed = saved?.indexed ?? 0;
  let run = 0;
  const say = options.onProgress ?? (() => undefined);
  if (saved) say(`resuming after page ${pages} (${patients} patients done)`);
  do {
    if (options.maxPages !== undefined && run >= options.maxPages) {
      say(`stopped after ${run} pages this run; run again to resume`);
      return { complete: false, resumed: !!saved, pages, patients, indexed };
    }
    const page = await options.chart.scanPatients({ limit: options.pageSize ?? 200, exclusiveStartKey: start });
    indexed += page.patients.length ? await indexPatientsForMatching(page.patients, { deps: options.deps, now: now() }) : 0;
    for (const index of options.indexes ?? []) if (page.patients.length) await index.indexPatients(page.patients, now());
    patients += page.patients.length;
    pages++;
    run++;
    start = page.lastKey;
    if (start) await store.putReindexProgress({ lastKey: JSON.stringify(start), patients, indexed, pages, updatedAt: now().toISOString() });
    say(`page ${pages}: ${patients} patients read, ${indexed} indexed`);
  } while (start);
  await store.clearReindexProgress();
  say(`done: ${patients} patients, ${indexed} indexed, ${pages} pages`);
  return { complete: true, resumed: !!saved, pages, patients, indexed };
}
