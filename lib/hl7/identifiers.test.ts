import fc from 'fast-check';
import { IDENTIFIER_LENGTH, isPlainIdentifier, SHORT_FORM_MARKER, shortIdentifier } from './identifiers';

describe('shortIdentifier', () => {
  test('a plain id that fits is written as it is', () => {
    expect(shortIdentifier('enc-2024-0042', IDENTIFIER_LENGTH.cx)).toBe('enc-2024-0042');
    expect(shortIdentifier('DEMO-000001', IDENTIFIER_LENGTH.cx)).toBe('DEMO-000001');
  });

  test('a longer id, or one with _, a space or an HL7 delimiter, gets the hashed form of exactly max characters', () => {
    for (const id of ['demo-encounter-1', 'has space', 'under_score', 'a|b', 'é']) {
      const short = shortIdentifier(id, IDENTIFIER_LENGTH.cx);
      expect(short).toMatch(/^_[0-9A-HJKMNP-TV-Z]{14}$/);
      expect(shortIdentifier(id, IDENTIFIER_LENGTH.cx)).toBe(short); // stable
    }
    expect(shortIdentifier('x'.repeat(23), IDENTIFIER_LENGTH.ei)).toHaveLength(22);
  });

  test('the short form of a short form is itself (a receiver sends our id back); a shorter look-alike is hashed', () => {
    for (const max of [IDENTIFIER_LENGTH.cx, IDENTIFIER_LENGTH.ei]) {
      const short = shortIdentifier('demo-clinician-1-with-a-long-id', max);
      expect(shortIdentifier(short, max)).toBe(short);
    }
    expect(shortIdentifier('_0', IDENTIFIER_LENGTH.cx)).toMatch(/^_[0-9A-HJKMNP-TV-Z]{14}$/);
    expect(shortIdentifier('_0', IDENTIFIER_LENGTH.cx)).not.toBe('_0');
  });

  test('property: within the length, stable, and a hashed form never equals a plain id', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), fc.constantFrom(15, 22), (id, max) => {
        const short = shortIdentifier(id, max);
        expect(short.length).toBeLessThanOrEqual(max);
        expect(shortIdentifier(id, max)).toBe(short);
        if (isPlainIdentifier(id, max)) {
          expect(short).toBe(id);
          expect(short.includes(SHORT_FORM_MARKER)).toBe(false);
        } else {
          expect(short.startsWith(SHORT_FORM_MARKER)).toBe(true);
        }
      }),
      { seed: 1301, numRuns: 500 },
    );
  });

  test('50,000 ids that differ only after the 15th character get 50,000 different short forms', () => {
    const seen = new Set<string>();
    for (let index = 0; index < 50_000; index += 1) {
      seen.add(shortIdentifier(`encounter-2024-${index}`, IDENTIFIER_LENGTH.cx));
    }
    expect(seen.size).toBe(50_000);
  });
});

describe('isPlainIdentifier (one scan)', () => {
  // the definition the scan replaces: printable ASCII without space, at least one character, none of `| ^ ~ \ & _`
  const byRegularExpressions = (id: string, max: number): boolean => id.length <= max && /^[!-~]+$/.test(id) && !/[|^~\\&_]/.test(id);

  test('agrees with the regular expressions on every character and on generated ids', () => {
    for (let code = 0; code < 0x200; code += 1) {
      const id = `a${String.fromCharCode(code)}b`;
      expect(isPlainIdentifier(id, 15)).toBe(byRegularExpressions(id, 15));
    }
    fc.assert(
      fc.property(fc.string({ maxLength: 20 }), fc.integer({ min: 0, max: 22 }), (id, max) => {
        expect(isPlainIdentifier(id, max)).toBe(byRegularExpressions(id, max));
      }),
    );
    expect(isPlainIdentifier('', 15)).toBe(false);
  });
});
