import { randomBytes } from 'node:crypto';
import { blockingKeys, linkKeyOf, matchIndexKey, packetBlockingKeys } from './match-keys';

const key = randomBytes(32);

describe('blocking keys', () => {
  it('are HMACs: no name or birth date in any key, different under another secret', () => {
    const keys = blockingKeys(key, 'Zoë', 'Ødegård', '1992-11-03');
    expect(keys.length).toBeGreaterThanOrEqual(3);
    for (const k of keys) {
      expect(k).toMatch(/^[0-9a-f]{64}$/);
      expect(k).not.toMatch(/odegard|zoe|1992/i);
    }
    expect(blockingKeys(randomBytes(32), 'Zoë', 'Ødegård', '1992-11-03')).not.toEqual(keys);
  });

  it('keeps the v1 last name + dob key first and unchanged', () => {
    expect(blockingKeys(key, 'Alex', 'Sample', '1980-04-12')[0]).toBe(matchIndexKey(key, 'SAMPLE', '1980-04-12'));
  });

  it('a typo in the last name still shares the first-name key; a sound-alike shares the phonetic key', () => {
    const chart = new Set(blockingKeys(key, 'Alex', 'Sample', '1980-04-12'));
    expect(blockingKeys(key, 'Alex', 'Sampel', '1980-04-12').some((k) => chart.has(k))).toBe(true);
    const smith = new Set(blockingKeys(key, 'Kim', 'Smith', '1970-01-01'));
    expect(blockingKeys(key, 'Jo', 'Smyth', '1970-01-01').some((k) => smith.has(k))).toBe(true);
  });

  it('each part of a double-barrelled name is a key; swapped names meet through the packet keys', () => {
    const single = new Set(blockingKeys(key, 'Ana', 'Smith', '1990-02-02'));
    expect(blockingKeys(key, 'Ana', 'Jones-Smith', '1990-02-02').some((k) => single.has(k))).toBe(true);
    const chart = new Set(blockingKeys(key, 'Alex', 'Sample', '1980-04-12'));
    expect(packetBlockingKeys(key, 'Sample', 'Alex', '1980-04-12').some((k) => chart.has(k))).toBe(true);
  });

  it('nothing without a birth date; links need an external id', () => {
    expect(blockingKeys(key, 'Alex', 'Sample', undefined)).toEqual([]);
    expect(linkKeyOf(key, 'p1', 'tool', '  ')).toBeUndefined();
    expect(linkKeyOf(key, 'p1', 'tool', 'ft-1')).toMatch(/^[0-9a-f]{64}$/);
    // scoped by partner: another partner naming the same tool and id gets another link
    expect(linkKeyOf(key, 'p2', 'tool', 'ft-1')).not.toBe(linkKeyOf(key, 'p1', 'tool', 'ft-1'));
  });
});
