import { normalizeStatus, resultStatusFromTable0123, TABLE_0123_VALUES } from './status';

describe('table 0123 (OBR-25) as a stored status', () => {
  it.each([
    ['P', 'preliminary', 'P'],
    ['F', 'final', 'F'],
    ['C', 'corrected', 'C'],
    ['X', 'cancelled', 'X'],
    ['f', 'final', 'f'],
    ['A', 'preliminary', 'preliminary'],
    ['R', 'preliminary', 'preliminary'],
    ['O', 'preliminary', 'preliminary'],
    ['I', 'preliminary', 'preliminary'],
    ['S', 'preliminary', 'preliminary'],
  ])('%s -> %s (the body carries %s, which the lab result vocabulary takes)', (code, status, submitted) => {
    expect(resultStatusFromTable0123(code)).toEqual({ ok: true, status, submitted });
    expect(normalizeStatus(submitted)).toBe(status);
  });

  it('Y and Z are no result; other values are not table 0123 values', () => {
    expect(resultStatusFromTable0123('Y')).toEqual({ ok: false, reason: 'not-a-result' });
    expect(resultStatusFromTable0123('Z')).toEqual({ ok: false, reason: 'not-a-result' });
    for (const code of ['Q', 'FF', 'final', 'W', '']) expect(resultStatusFromTable0123(code)).toEqual({ ok: false, reason: 'unknown' });
  });

  it('every table 0123 value is answered one way or the other; JSON intake keeps its vocabulary (R is not a JSON status)', () => {
    for (const code of TABLE_0123_VALUES) expect(resultStatusFromTable0123(code).ok).toBe(!['Y', 'Z'].includes(code));
    expect(normalizeStatus('R')).toBeUndefined();
  });
});
