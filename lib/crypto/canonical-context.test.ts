import { assertEncryptionContext, canonicalContext, contextsEqual, copyContext } from './canonical-context';

describe('canonicalContext', () => {
  it('sorts keys and has no whitespace', () => {
    expect(canonicalContext({ sender: 'lab-1', recordType: 'lab-result', resultId: 'r-9' })).toBe(
      '{"recordType":"lab-result","resultId":"r-9","sender":"lab-1"}',
    );
    expect(canonicalContext({ b: '2', a: '1' })).toBe(canonicalContext({ a: '1', b: '2' }));
  });

  it('treats undefined, null and {} alike', () => {
    expect(canonicalContext(undefined)).toBe('{}');
    expect(canonicalContext(null)).toBe('{}');
    expect(canonicalContext({})).toBe('{}');
  });

  it('escapes like JSON and is parseable back to the same map', () => {
    const ctx = { 'quote"key': 'line\nbreak', ü: '\u2028', z: '' };
    const text = canonicalContext(ctx);
    expect(JSON.parse(text)).toEqual(ctx);
    expect(Object.keys(JSON.parse(text))).toEqual(['quote"key', 'z', 'ü']);
  });

  it('keeps a __proto__ key as data', () => {
    const ctx = JSON.parse('{"__proto__":"x","a":"y"}') as Record<string, string>;
    expect(canonicalContext(ctx)).toBe('{"__proto__":"x","a":"y"}');
    const copy = copyContext(ctx);
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
  });

  it('distinguishes values that a naive join would merge', () => {
    expect(contextsEqual({ a: 'b,c' }, { a: 'b', c: '' })).toBe(false);
    expect(contextsEqual({ 'a:b': 'c' }, { a: 'b:c' })).toBe(false);
    expect(contextsEqual({ a: '1', b: '2' }, { b: '2', a: '1' })).toBe(true);
  });

  it('rejects non-string values, arrays, class instances and empty keys without echoing values', () => {
    const secret = 'Jane Doe 1970-01-01';
    for (const bad of [{ name: secret, n: 1 }, [secret], new Date(), { '': secret }, 'x', 3] as unknown[]) {
      let message = '';
      try {
        canonicalContext(bad as Record<string, string>);
      } catch (err) {
        expect(err).toBeInstanceOf(TypeError);
        message = (err as Error).message;
      }
      expect(message).not.toBe('');
      expect(message).not.toContain(secret);
    }
    expect(() => assertEncryptionContext({ a: 'b' })).not.toThrow();
  });

  it('copyContext returns a sorted copy', () => {
    const original = { b: '2', a: '1' };
    const copy = copyContext(original);
    expect(Object.keys(copy)).toEqual(['a', 'b']);
    original.a = 'changed';
    expect(copy.a).toBe('1');
  });
});
