/**
 * The newest entries of a patient's two newest-first sources, the chart timeline and the lab
 * results, merged as the summary and $everything merge them (lib/chart/timeline.ts
 * mergeNewestFirst: by instant, a lab result before a chart record only when strictly newer), read
 * in chunks instead of `count` from each (issue 31 item 4). Reading `count` + 1 of both sources to
 * return `count` read twice what a page returns; here each source is first read for about half the
 * page, and only the source that runs short is read again, from where it stopped, for at most what
 * the page still needs. A page then reads about `count` + 1 items plus one chunk's slack, in at most a
 * few Queries, and the merged order is exactly the one both whole lists would give.
 */
import { mergeNewestFirst, type TimelineEntry } from '../chart/timeline';

/** One newest-first source: up to `limit` items strictly older than `before` (a position it returned). */
export interface NewestFirstSource<T> {
  read(limit: number, before: string | undefined): Promise<T[]>;
  positionOf(item: T): string;
  timeOf(item: T): string;
}

/** Reads of each source for one page (for the bench and the tests). */
export interface MergeReads {
  records: { calls: number; items: number };
  labs: { calls: number; items: number };
}

interface Cursor<T> {
  source: NewestFirstSource<T>;
  buffer: T[];
  before: string | undefined;
  exhausted: boolean;
  calls: number;
  items: number;
}

async function refill<T>(cursor: Cursor<T>, limit: number): Promise<void> {
  const items = await cursor.source.read(limit, cursor.before);
  cursor.calls += 1;
  cursor.items += items.length;
  cursor.buffer.push(...items);
  if (items.length > 0) cursor.before = cursor.source.positionOf(items[items.length - 1]!);
  if (items.length < limit) cursor.exhausted = true;
}

/**
 * The first `count` entries of the merge of both sources from their start positions (fewer only when
 * both run out), in mergeNewestFirst's order. `firstChunk` is the first read of each source (default
 * about half of `count`, at least 1).
 */
export async function newestMerged<R, L>(
  records: NewestFirstSource<R> & { start?: string },
  labs: (NewestFirstSource<L> & { start?: string }) | undefined,
  count: number,
  firstChunk: number = Math.max(1, Math.ceil(count / 2) + 1),
): Promise<{ entries: Array<TimelineEntry<R, L>>; reads: MergeReads }> {
  const r: Cursor<R> = { source: records, buffer: [], before: records.start, exhausted: false, calls: 0, items: 0 };
  const l: Cursor<L> | undefined = labs ? { source: labs, buffer: [], before: labs.start, exhausted: false, calls: 0, items: 0 } : undefined;
  const chunk = Math.min(count, firstChunk);
  await Promise.all([refill(r, l ? chunk : count), l ? refill(l, chunk) : Promise.resolve()]);
  const entries: Array<TimelineEntry<R, L>> = [];
  let ri = 0;
  let li = 0;
  while (entries.length < count) {
    // a source whose buffer ran dry but may hold more is read before anything is taken
    const need = count - entries.length;
    const refills: Array<Promise<void>> = [];
    if (r.buffer.length === 0 && !r.exhausted) refills.push(refill(r, need));
    if (l && l.buffer.length === 0 && !l.exhausted) refills.push(refill(l, need));
    if (refills.length > 0) await Promise.all(refills);
    const record = r.buffer[0];
    const lab = l?.buffer[0];
    if (record === undefined && lab === undefined) break;
    // the same rule as mergeNewestFirst: a lab result first only when strictly newer
    if (lab !== undefined && (record === undefined || Date.parse(l!.source.timeOf(lab)) > Date.parse(records.timeOf(record)))) {
      entries.push({ kind: 'lab', lab, index: li });
      li += 1;
      l!.buffer.shift();
    } else {
      entries.push({ kind: 'record', record: record!, index: ri });
      ri += 1;
      r.buffer.shift();
    }
  }
  return {
    entries,
    reads: { records: { calls: r.calls, items: r.items }, labs: { calls: l?.calls ?? 0, items: l?.items ?? 0 } },
  };
}

export { mergeNewestFirst };
