import { mergeNewestFirst } from '../chart/timeline';
import { newestMerged, type NewestFirstSource } from './merged-timeline';

interface Item {
  id: string;
  at: string;
}

/** A newest-first list served as a source: `before` is the id of an item it returned. */
function sourceOf(items: Item[]): NewestFirstSource<Item> {
  return {
    read: (limit, before) => {
      const from = before === undefined ? 0 : items.findIndex((item) => item.id === before) + 1;
      return Promise.resolve(items.slice(from, from + limit));
    },
    positionOf: (item) => item.id,
    timeOf: (item) => item.at,
  };
}

/** Deterministic pseudo-random numbers (no Math.random: the test is the same on every run). */
function lcg(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state * 1103515245 + 12345) % 2147483648;
    return state / 2147483648;
  };
}

/** n items newest first, times drawn from a few minutes so that records and labs share instants. */
function timeline(prefix: string, n: number, random: () => number): Item[] {
  const times = Array.from({ length: n }, () => Math.floor(random() * 40));
  times.sort((a, b) => b - a);
  return times.map((minute, i) => ({ id: `${prefix}${i}`, at: new Date(Date.UTC(2025, 0, 1, 0, minute)).toISOString() }));
}

const key = (entry: { kind: string; record?: Item; lab?: Item }) => (entry.kind === 'record' ? entry.record!.id : entry.lab!.id);

describe('newestMerged: the merge of two newest-first sources read in chunks', () => {
  test.each([
    [0, 30, 1],
    [1, 30, 7],
    [2, 0, 5],
    [3, 25, 0],
    [4, 60, 10],
    [5, 200, 5],
    [6, 5, 200],
  ])('seed %i (%i records, %i labs): every page walked from its positions gives mergeNewestFirst of the whole lists', async (seed, recordCount, labCount) => {
    const random = lcg(seed + 1);
    const records = timeline('r', recordCount, random);
    const labs = timeline('l', labCount, random);
    const whole = mergeNewestFirst(
      records,
      (item) => item.at,
      labs,
      (item) => item.at,
    ).map(key);
    for (const count of [1, 3, 8, 21]) {
      const walked: string[] = [];
      let c: string | undefined;
      let l: string | undefined;
      for (let page = 0; page <= whole.length; page += 1) {
        const { entries, reads } = await newestMerged({ ...sourceOf(records), start: c }, { ...sourceOf(labs), start: l }, count + 1);
        // about a page plus the first chunk's slack, never count + 1 from each source
        expect(reads.records.items + reads.labs.items).toBeLessThanOrEqual(count + 1 + Math.ceil((count + 1) / 2) + 1);
        for (const entry of entries.slice(0, count)) {
          walked.push(key(entry));
          if (entry.kind === 'record') c = entry.record.id;
          else l = entry.lab.id;
        }
        if (entries.length <= count) break;
      }
      expect(walked).toEqual(whole);
    }
  });

  test('without a second source it reads the records alone, in one call when they fit', async () => {
    const records = timeline('r', 10, lcg(9));
    const { entries, reads } = await newestMerged<Item, Item>(sourceOf(records), undefined, 5);
    expect(entries.map(key)).toEqual(records.slice(0, 5).map((item) => item.id));
    expect(reads.records).toEqual({ calls: 1, items: 5 });
    expect(reads.labs).toEqual({ calls: 0, items: 0 });
  });

  test('a time that does not parse never counts as newer (as mergeNewestFirst)', async () => {
    const records = [{ id: 'r0', at: '2025-01-01T00:00:00Z' }];
    const labs = [{ id: 'l0', at: 'not a time' }];
    const { entries } = await newestMerged(sourceOf(records), sourceOf(labs), 2);
    expect(entries.map(key)).toEqual(['r0', 'l0']);
  });
});
