import { randomBytes } from 'node:crypto';
import { DEFAULT_DATA_KEY_MAX_AGE_MS, DEFAULT_DATA_KEY_MAX_USES, DataKeyCache } from './data-key-cache';

const isZero = (b: Buffer) => b.every((x) => x === 0);

function loader() {
  const keys: Buffer[] = [];
  const load = jest.fn(async () => {
    const key = randomBytes(32);
    keys.push(key);
    return { key, meta: { n: keys.length } };
  });
  return { load, keys };
}

describe('DataKeyCache', () => {
  it('defaults to 5 minutes and 10,000 uses', () => {
    expect(DEFAULT_DATA_KEY_MAX_AGE_MS).toBe(300_000);
    expect(DEFAULT_DATA_KEY_MAX_USES).toBe(10_000);
    const cache = new DataKeyCache();
    expect([cache.maxAgeMs, cache.maxUses]).toEqual([300_000, 10_000]);
  });

  it('serves maxUses operations per key, then loads a new one and zeroes the old', async () => {
    const cache = new DataKeyCache<{ n: number }>({ maxUses: 3 });
    const { load, keys } = loader();
    const seen: number[] = [];
    for (let i = 0; i < 7; i++) seen.push(await cache.acquire('k', load, (_key, meta) => meta.n));
    expect(seen).toEqual([1, 1, 1, 2, 2, 2, 3]);
    expect(load).toHaveBeenCalledTimes(3);
    expect(isZero(keys[0]!)).toBe(true);
    expect(isZero(keys[1]!)).toBe(true);
    expect(isZero(keys[2]!)).toBe(false); // still live, 1 of 3 uses
    cache.clear();
    expect(isZero(keys[2]!)).toBe(true);
  });

  it('expires keys after maxAgeMs (injected clock) and zeroes them', async () => {
    let now = 1_000_000;
    const cache = new DataKeyCache<{ n: number }>({ maxAgeMs: 60_000, clock: () => now });
    const { load, keys } = loader();
    await cache.acquire('k', load, () => undefined);
    now += 59_999;
    await cache.acquire('k', load, () => undefined);
    expect(load).toHaveBeenCalledTimes(1);
    now += 1;
    await cache.acquire('k', load, () => undefined);
    expect(load).toHaveBeenCalledTimes(2);
    expect(isZero(keys[0]!)).toBe(true);
    expect(isZero(keys[1]!)).toBe(false);
  });

  it('evicts the least recently used entry beyond maxEntries', async () => {
    const cache = new DataKeyCache<{ n: number }>({ maxEntries: 2 });
    const { load, keys } = loader();
    await cache.acquire('a', load, () => undefined);
    await cache.acquire('b', load, () => undefined);
    await cache.acquire('a', load, () => undefined); // a is now most recent
    await cache.acquire('c', load, () => undefined); // evicts b
    expect(cache.size).toBe(2);
    expect(isZero(keys[1]!)).toBe(true);
    expect(isZero(keys[0]!)).toBe(false);
    await cache.acquire('a', load, () => undefined);
    expect(load).toHaveBeenCalledTimes(3);
  });

  it('shares one load between concurrent misses', async () => {
    const cache = new DataKeyCache<{ n: number }>({ maxUses: 100 });
    const { load } = loader();
    const results = await Promise.all(Array.from({ length: 25 }, () => cache.acquire('k', load, (_k, meta) => meta.n)));
    expect(load).toHaveBeenCalledTimes(1);
    expect(new Set(results)).toEqual(new Set([1]));
  });

  it('with maxUses 1 every concurrent waiter still gets exactly one fresh key', async () => {
    const cache = new DataKeyCache<{ n: number }>({ maxUses: 1 });
    const { load, keys } = loader();
    const results = await Promise.all(Array.from({ length: 5 }, () => cache.acquire('k', load, (_k, meta) => meta.n)));
    expect(new Set(results).size).toBe(5);
    expect(load).toHaveBeenCalledTimes(5);
    expect(keys.every(isZero)).toBe(true);
  });

  it('propagates a load failure to every waiter and recovers on the next call', async () => {
    const cache = new DataKeyCache<{ n: number }>();
    const failing = jest.fn(async (): Promise<{ key: Buffer; meta: { n: number } }> => {
      throw new Error('kms down');
    });
    const outcomes = await Promise.allSettled([cache.acquire('k', failing, () => 1), cache.acquire('k', failing, () => 1)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected']);
    expect(failing).toHaveBeenCalledTimes(1);

    const syncThrow = (): Promise<{ key: Buffer; meta: { n: number } }> => {
      throw new Error('sync');
    };
    await expect(cache.acquire('k', syncThrow, () => 1)).rejects.toThrow('sync');

    const { load } = loader();
    await expect(cache.acquire('k', load, (_k, meta) => meta.n)).resolves.toBe(1);
  });

  it('counts a use even when the callback throws', async () => {
    const cache = new DataKeyCache<{ n: number }>({ maxUses: 2 });
    const { load } = loader();
    await expect(
      cache.acquire('k', load, () => {
        throw new Error('boom');
      }),
    ).rejects.toThrow('boom');
    await cache.acquire('k', load, () => undefined);
    await cache.acquire('k', load, () => undefined);
    expect(load).toHaveBeenCalledTimes(2);
  });

  it('rejects nonsensical bounds', () => {
    expect(() => new DataKeyCache({ maxUses: 0 })).toThrow(RangeError);
    expect(() => new DataKeyCache({ maxAgeMs: -1 })).toThrow(RangeError);
    expect(() => new DataKeyCache({ maxEntries: 1.5 })).toThrow(RangeError);
    expect(() => new DataKeyCache({ maxAgeMs: Infinity })).toThrow(RangeError);
    expect(new DataKeyCache({ maxUses: Infinity }).maxUses).toBe(Infinity);
  });
});
