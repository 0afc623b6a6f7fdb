/**
 * The sliding-window limiter against dynalite (real DynamoDB calls): no interval of one window
 * ever holds more than `limit` admissions, across window boundaries, under concurrency, and with
 * writers whose clocks disagree.
 */
import { startLocalDynamoDb, type LocalDynamoDb } from '../chart/testing/local-dynamodb';
import { ADMISSIONS_PER_SHARD_PER_SECOND, SHARD_VISIT_ADMISSIONS, shardsFor, SLOTS_PER_WINDOW, SlidingWindowRateLimiter } from './rate-limiter';
import { countingDynamoDbClient } from './testing/counting-client';

let local: LocalDynamoDb;
let limiter: SlidingWindowRateLimiter;
let tables: Awaited<ReturnType<LocalDynamoDb['createTables']>>;
let n = 0;
const subject = () => `test-${++n}`;

beforeAll(async () => {
  local = await startLocalDynamoDb();
  tables = await local.createTables('rate-limiter-test');
  limiter = new SlidingWindowRateLimiter(local.db, tables.rateLimit);
});
afterAll(async () => local?.stop());

/** Largest number of admissions inside any half-open interval [t, t + windowMs). */
function maxInAnyWindow(admittedAt: number[], windowMs: number): number {
  const times = [...admittedAt].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

describe('SlidingWindowRateLimiter', () => {
  it('admits `limit` requests, then refuses with remaining 0 and a reset one window after the first', async () => {
    const key = subject();
    const t0 = Date.UTC(2026, 0, 1, 0, 0, 0);
    const states = [];
    for (let i = 0; i < 6; i++) states.push(await limiter.hit(key, 5, 60, new Date(t0 + i * 100)));
    expect(states.map((s) => s.exceeded)).toEqual([false, false, false, false, false, true]);
    expect(states.map((s) => s.remaining)).toEqual([4, 3, 2, 1, 0, 0]);
    // the oldest admission (slot of t0, 1 s slots) leaves the window at t0 + 61 s
    expect(states[5]!.reset).toBe(t0 / 1000 + 61);
    expect(states[5]!.limit).toBe(5);
  });

  it('the fixed-window hole is closed: a full window at the end of one minute leaves nothing at the start of the next', async () => {
    const key = subject();
    const boundary = Date.UTC(2026, 0, 1, 0, 1, 0);
    const admitted: number[] = [];
    for (let i = 0; i < 10; i++) {
      const at = boundary - 500 + i * 100; // 0.5 s before to 0.5 s after a minute boundary
      if (!(await limiter.hit(key, 5, 60, new Date(at))).exceeded) admitted.push(at);
    }
    expect(admitted).toHaveLength(5);
  });

  it('a stream of requests over several windows never has more than `limit` in any window', async () => {
    const key = subject();
    const limit = 7;
    const windowSeconds = 10;
    const t0 = Date.UTC(2026, 0, 1, 1, 0, 0);
    const admitted: number[] = [];
    // a deterministic, bursty arrival pattern over 4 windows
    let at = t0;
    for (let i = 0; i < 160; i++) {
      at += (i * 7919) % 13 === 0 ? 1500 : ((i * 104729) % 5) * 60;
      if (!(await limiter.hit(key, limit, windowSeconds, new Date(at))).exceeded) admitted.push(at);
    }
    expect(maxInAnyWindow(admitted, windowSeconds * 1000)).toBeLessThanOrEqual(limit);
    // and it does admit again as the window slides (not a lockout)
    expect(admitted.length).toBeGreaterThan(limit * 3);
  });

  it('200 concurrent requests of one slot: exactly `limit` admitted, remaining limit-1..0 each once', async () => {
    const key = subject();
    const at = new Date(Date.UTC(2026, 0, 1, 2, 0, 0));
    const states = await Promise.all(Array.from({ length: 200 }, () => limiter.hit(key, 20, 60, at)));
    const admitted = states.filter((s) => !s.exceeded);
    expect(admitted).toHaveLength(20);
    expect(admitted.map((s) => s.remaining).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_v, i) => i));
  });

  it('concurrent requests across slot boundaries and with clocks up to 2 slots apart never exceed the limit', async () => {
    const key = subject();
    const windowSeconds = 6; // 100 ms slots
    const slotMs = (windowSeconds * 1000) / SLOTS_PER_WINDOW;
    const t0 = Date.UTC(2026, 0, 1, 3, 0, 0);
    const admitted: number[] = [];
    for (let wave = 0; wave < 12; wave++) {
      const base = t0 + wave * 1000;
      const times = Array.from({ length: 30 }, (_v, i) => base + ((i * 37) % 5) * slotMs - slotMs);
      const states = await Promise.all(times.map((t) => limiter.hit(key, 9, windowSeconds, new Date(t))));
      // an admission counts at the latest time any writer had reached (a slow clock counts forward)
      states.forEach((s, i) => !s.exceeded && admitted.push(times[i]!));
    }
    // clocks up to 4 slots apart: an admission may be counted up to 4 slots after its own time
    expect(maxInAnyWindow(admitted, windowSeconds * 1000 - 5 * slotMs)).toBeLessThanOrEqual(9);
    expect(admitted.length).toBeGreaterThan(9);
  });

  it('four containers (limiters that each remember the item) on one subject: never more than `limit` in any window', async () => {
    const key = subject();
    const containers = Array.from({ length: 4 }, () => new SlidingWindowRateLimiter(local.db, tables.rateLimit));
    const windowSeconds = 6; // 100 ms slots
    const t0 = Date.UTC(2026, 0, 1, 5, 0, 0);
    const admitted: number[] = [];
    for (let wave = 0; wave < 40; wave++) {
      const base = t0 + wave * 350;
      const times = Array.from({ length: 12 }, (_v, i) => base + ((i * 31) % 7) * 20);
      const states = await Promise.all(times.map((t, i) => containers[i % 4]!.hit(key, 11, windowSeconds, new Date(t))));
      states.forEach((s, i) => !s.exceeded && admitted.push(times[i]!));
    }
    // writers' clocks here are up to 2 slots apart (see the test above for the margin)
    expect(maxInAnyWindow(admitted, windowSeconds * 1000 - 3 * 100)).toBeLessThanOrEqual(11);
    expect(admitted.length).toBeGreaterThan(11 * 2);
  });

  it('subjects do not share counts', async () => {
    const at = new Date(Date.UTC(2026, 0, 1, 4, 0, 0));
    const a = subject();
    const b = subject();
    expect((await limiter.hit(a, 1, 60, at)).exceeded).toBe(false);
    expect((await limiter.hit(a, 1, 60, at)).exceeded).toBe(true);
    expect((await limiter.hit(b, 1, 60, at)).exceeded).toBe(false);
  });

  describe('one key at 1,000 requests/s (sharded counters)', () => {
    it('splits fast limits over shards, slow ones stay one item', () => {
      expect(shardsFor(1000, 60)).toBe(1);
      expect(shardsFor(300, 60)).toBe(1);
      expect(shardsFor(3000, 60)).toBe(1);
      expect(shardsFor(6000, 60)).toBe(2);
      expect(shardsFor(60_000, 60)).toBe(1000 / ADMISSIONS_PER_SHARD_PER_SECOND);
      expect(shardsFor(10_000_000, 1)).toBe(64);
      expect(shardsFor(3, 1)).toBe(1);
    });

    it('1,250 requests in one second against 1,000/s: never more than 1,000 in any second, about all of it used, writes spread', async () => {
      const counting = countingDynamoDbClient(local.endpoint);
      try {
        // 25 containers (a Lambda container serves one request at a time), fixed pseudo-random choices
        let seed = 7;
        const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
        const containers = Array.from({ length: 25 }, () => new SlidingWindowRateLimiter(counting.db, tables.rateLimit, random));
        const key = subject();
        const t0 = Date.UTC(2026, 0, 1, 6, 0, 0);
        const admitted: number[] = [];
        // 1,250 requests over one second: 50 rounds, each container serving one request per round
        for (let round = 0; round < 50; round++) {
          const times = containers.map((_c, i) => t0 + round * 20 + (i % 20));
          const states = await Promise.all(times.map((t, i) => containers[i]!.hit(key, 1000, 1, new Date(t))));
          states.forEach((s, i) => {
            expect(s.limit).toBe(1000);
            if (!s.exceeded) admitted.push(times[i]!);
          });
        }
        const slotMs = 1000 / SLOTS_PER_WINDOW;
        const busiest = maxInAnyWindow(admitted, 1000 - 2 * slotMs);
        expect(busiest).toBeLessThanOrEqual(1000);
        // 1,250 offered for 1,000 places: the shards fill up (two tries per request)
        const firstSecond = admitted.filter((t) => t < t0 + 1000).length;
        expect(firstSecond).toBeGreaterThanOrEqual(950);
        const perItem = new Map<string, number>();
        for (const pk of counting.writtenKeys) perItem.set(pk, (perItem.get(pk) ?? 0) + 1);
        const largest = Math.max(...perItem.values());
        expect(perItem.size).toBe(20);
        expect(largest / counting.writtenKeys.length).toBeLessThan(0.1);
      } finally {
        counting.db.destroy();
      }
    });

    it('one container alone within one slot: visits of at most SHARD_VISIT_ADMISSIONS admissions on several shards, one call per admission', async () => {
      const counting = countingDynamoDbClient(local.endpoint);
      try {
        let seed = 5;
        const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
        const container = new SlidingWindowRateLimiter(counting.db, tables.rateLimit, random);
        const key = subject();
        const t0 = Date.UTC(2026, 0, 1, 8, 0, 0);
        // 100 admissions inside one 1 s slot of a 60 s window (limit 60,000 a minute: 20 shards)
        for (let i = 0; i < 100; i++) expect((await container.hit(key, 60_000, 60, new Date(t0 + i * 5))).exceeded).toBe(false);
        // the first request reads all 20 shards; alone, its remembered copies are exact: no read, no lost race after it
        expect(counting.calls[0]).toBe('BatchGetItemCommand');
        expect(counting.calls.slice(1)).toEqual(Array.from({ length: 100 }, () => 'UpdateItemCommand'));
        // counted, not timed: the slot's writes fall on several shards, in runs of at most 16 (twice that
        // when the shard left is still the lighter of the two picked)
        const runs: number[] = [];
        counting.writtenKeys.forEach((pk, i) => (i > 0 && pk === counting.writtenKeys[i - 1] ? runs[runs.length - 1]!++ : runs.push(1)));
        expect(new Set(counting.writtenKeys).size).toBeGreaterThanOrEqual(Math.floor(100 / SHARD_VISIT_ADMISSIONS));
        expect(runs.length).toBeGreaterThanOrEqual(Math.floor(100 / SHARD_VISIT_ADMISSIONS));
        expect(Math.max(...runs)).toBeLessThanOrEqual(2 * SHARD_VISIT_ADMISSIONS);
      } finally {
        counting.db.destroy();
      }
    });

    it('containers sharing a key read the two shards they pick at the start of a visit (one BatchGetItem)', async () => {
      const counting = countingDynamoDbClient(local.endpoint);
      try {
        let seed = 9;
        const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
        const [one, two] = [0, 1].map(() => new SlidingWindowRateLimiter(counting.db, tables.rateLimit, random));
        const key = subject();
        const t0 = Date.UTC(2026, 0, 1, 8, 30, 0);
        // two containers in turn, 64 admissions each inside one slot, on a limit of 2 shards (6,000 a
        // minute): each finds the other's writes
        expect(shardsFor(6000, 60)).toBe(2);
        for (let i = 0; i < 64; i++) {
          expect((await one!.hit(key, 6000, 60, new Date(t0 + i * 10))).exceeded).toBe(false);
          expect((await two!.hit(key, 6000, 60, new Date(t0 + i * 10 + 5))).exceeded).toBe(false);
        }
        const reads = counting.calls.filter((c) => c === 'BatchGetItemCommand').length;
        // 2 first reads of all shards, then at most one per visit (64 / 16 = 4 visits each)
        expect(reads).toBeGreaterThan(2);
        expect(reads).toBeLessThanOrEqual(2 + 2 * (64 / SHARD_VISIT_ADMISSIONS));
        expect(counting.calls.length / 128).toBeLessThan(1.15);
      } finally {
        counting.db.destroy();
      }
    });

    it('a 60 s window at 1,000 requests/s from 10 containers: about one call per request, writes spread over all shards', async () => {
      const counting = countingDynamoDbClient(local.endpoint);
      try {
        let seed = 11;
        const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
        const containers = Array.from({ length: 10 }, () => new SlidingWindowRateLimiter(counting.db, tables.rateLimit, random));
        const key = subject();
        const t0 = Date.UTC(2026, 0, 1, 7, 0, 0);
        // 2,000 requests over 2 s (1,000/s), one per container per round; limit 60,000 a minute
        for (let round = 0; round < 200; round++) {
          const states = await Promise.all(containers.map((c, i) => c.hit(key, 60_000, 60, new Date(t0 + round * 10 + i))));
          for (const s of states) expect(s.exceeded).toBe(false);
        }
        const perItem = new Map<string, number>();
        for (const pk of counting.writtenKeys) perItem.set(pk, (perItem.get(pk) ?? 0) + 1);
        const perRequest = counting.calls.length / 2000;
        // first request of each container: BatchGetItem of all shards; then one BatchGetItem of two
        // shards per visit (16 admissions or a new slot), and now and then a lost race and a read
        expect(perRequest).toBeLessThan(1.1);
        // a container switches shards within a slot: all 20 written, none near a whole container's slot (100)
        expect(perItem.size).toBe(20);
        expect(Math.max(...perItem.values())).toBeLessThan(2000 / 10);
      } finally {
        counting.db.destroy();
      }
    });

    it('8 containers offered 1,250 requests/s for 1.5 s against 1,000/s, switching shards at every admission: never more than 1,000 in any second', async () => {
      let seed = 31;
      const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
      // a slot of a 1 s window is 16.7 ms (about 3 admissions of a container here): visits of 1 admission make every admission a switch
      const containers = Array.from({ length: 8 }, () => new SlidingWindowRateLimiter(local.db, tables.rateLimit, random, 1));
      const key = subject();
      const t0 = Date.UTC(2026, 0, 1, 9, 0, 0);
      const admitted: number[] = [];
      // request j at t0 + j x 0.8 ms, the 8 of a round at once (clocks within one slot of each other)
      for (let j = 0; j < 1875; j += 8) {
        const times = containers.map((_c, i) => t0 + Math.floor(((j + i) * 1000) / 1250));
        const states = await Promise.all(times.map((t, i) => containers[i]!.hit(key, 1000, 1, new Date(t))));
        states.forEach((s, i) => !s.exceeded && admitted.push(times[i]!));
      }
      const slotMs = 1000 / SLOTS_PER_WINDOW;
      expect(maxInAnyWindow(admitted, 1000 - 2 * slotMs)).toBeLessThanOrEqual(1000);
      // not a lockout: the shards fill in the first second and admit again as the window slides
      expect(admitted.filter((t) => t < t0 + 1000).length).toBeGreaterThanOrEqual(950);
      expect(admitted.length).toBeGreaterThan(1200);
    });
  });
});
