/**
 * Our attribute-value codec against @aws-sdk/util-dynamodb (a devDependency kept for this
 * comparison only) over generated records: unicode and empty strings, safe and unsafe numbers,
 * binary, nesting, `undefined` and functions inside maps and lists. The items the stores really
 * write are compared in test/integration/attribute-values-store-items.test.ts.
 */
import fc from 'fast-check';
import { marshall as sdkMarshall, unmarshall as sdkUnmarshall } from '@aws-sdk/util-dynamodb';
import { marshall, unmarshall, UnstorableValueError } from './attribute-values';

/** Either the result or "throws": the SDK throws plain Errors, we throw UnstorableValueError. */
function outcome<T>(run: () => T): T | 'throws' {
  try {
    return run();
  } catch {
    return 'throws';
  }
}

const storableLeaf = fc.oneof(
  fc.string({ unit: 'binary' }),
  fc.string({ unit: 'grapheme' }),
  fc.constant(''),
  fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
  fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e15, max: 1e15 }),
  fc.constantFrom(0, -0, 0.1, 1e-7, 5e-324, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }),
  fc.boolean(),
  fc.constant(null),
  fc.uint8Array({ maxLength: 16 }),
  fc.uint8Array({ maxLength: 16 }).map((bytes) => Buffer.from(bytes)),
);

/** Values the SDK refuses (and so must we), or skips inside containers. */
const oddLeaf = fc.oneof(
  fc.constant(undefined),
  fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, Number.MAX_SAFE_INTEGER + 2, -1e300),
  fc.constant(() => 1),
  fc.date(),
);

const { record: storableRecord } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, storableLeaf, tie('list'), tie('record')),
  list: fc.array(tie('value'), { maxLength: 5 }),
  record: fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 8 }), tie('value'), { maxKeys: 6 }),
}));

const { record: anyRecord } = fc.letrec((tie) => ({
  value: fc.oneof({ depthSize: 'small', withCrossShrink: true }, storableLeaf, oddLeaf, tie('list'), tie('record')),
  list: fc.array(tie('value'), { maxLength: 5 }),
  record: fc.dictionary(fc.string({ unit: 'grapheme', maxLength: 8 }), tie('value'), { maxKeys: 6 }),
}));

describe('marshall / unmarshall: the same as @aws-sdk/util-dynamodb', () => {
  it('marshall gives the SDK attribute values for every storable record, with and without removeUndefinedValues', () => {
    fc.assert(
      fc.property(storableRecord, (record) => {
        expect(marshall(record)).toEqual(sdkMarshall(record));
        expect(marshall(record, { removeUndefinedValues: true })).toEqual(sdkMarshall(record, { removeUndefinedValues: true }));
      }),
      { seed: 3105, numRuns: 500 },
    );
  });

  it('unmarshall reads back what the SDK wrote as the SDK reads it (numbers beyond the safe range as bigint)', () => {
    fc.assert(
      fc.property(storableRecord, (record) => {
        const item = sdkMarshall(record);
        expect(unmarshall(item)).toEqual(sdkUnmarshall(item));
        expect(marshall(unmarshall(item))).toEqual(item);
      }),
      { seed: 3106, numRuns: 500 },
    );
  });

  it('refuses what the SDK refuses, skips what it skips (undefined, functions, NaN, unsafe integers, Date)', () => {
    let refused = 0;
    fc.assert(
      fc.property(anyRecord, fc.boolean(), (record, removeUndefinedValues) => {
        const ours = outcome(() => marshall(record, { removeUndefinedValues }));
        const sdk = outcome(() => sdkMarshall(record, { removeUndefinedValues }));
        expect(ours).toEqual(sdk);
        if (ours === 'throws') {
          refused++;
          expect(() => marshall(record, { removeUndefinedValues })).toThrow(UnstorableValueError);
        }
      }),
      { seed: 3107, numRuns: 500 },
    );
    // the generator does reach both sides
    expect(refused).toBeGreaterThan(50);
    expect(refused).toBeLessThan(450);
  });

  it('the cases one by one', () => {
    const bytes = new Uint8Array([0, 255, 7]);
    const record = {
      s: 'Zoë Ødegård 🧪',
      empty: '',
      n: 42,
      f: -0.5,
      big: 2n ** 60n,
      t: true,
      f0: false,
      nil: null,
      b: bytes,
      l: [1, 'a', [null]],
      m: { deep: { x: 'y' } },
    };
    const item = marshall(record);
    expect(item).toEqual({
      s: { S: 'Zoë Ødegård 🧪' },
      empty: { S: '' },
      n: { N: '42' },
      f: { N: '-0.5' },
      big: { N: '1152921504606846976' },
      t: { BOOL: true },
      f0: { BOOL: false },
      nil: { NULL: true },
      b: { B: bytes },
      l: { L: [{ N: '1' }, { S: 'a' }, { L: [{ NULL: true }] }] },
      m: { M: { deep: { M: { x: { S: 'y' } } } } },
    });
    expect(unmarshall(item)).toEqual(record);
    expect(marshall({ a: undefined, f: () => 1, l: [undefined, 1] }, { removeUndefinedValues: true })).toEqual({ l: { L: [{ N: '1' }] } });
    expect(unmarshall({ n: { N: '12345678901234567890' } })).toEqual({ n: 12345678901234567890n });
  });

  it('a refusal names the kind of value and where it was, never the value', () => {
    const refusal = (run: () => unknown) => {
      try {
        run();
      } catch (error) {
        return error as UnstorableValueError;
      }
      throw new Error('did not throw');
    };
    const date = refusal(() => marshall({ record: { items: [{ at: new Date('2024-01-01T00:00:00Z') }] } }));
    expect(date).toBeInstanceOf(UnstorableValueError);
    expect(date.path).toBe('.record.items[0].at');
    expect(date.kind).toBe('a Date');
    expect(date.message).not.toContain('2024');
    expect(refusal(() => marshall({ n: Number.NaN })).kind).toBe('NaN');
    expect(refusal(() => marshall({ n: 2 ** 60 })).message).not.toContain(String(2 ** 60));
    expect(refusal(() => marshall({ u: undefined })).path).toBe('.u');
    expect(refusal(() => marshall({ s: new Set(['Alex']) })).message).not.toContain('Alex');
    expect(refusal(() => marshall(new Map([['a', 1]]))).path).toBe('');
    const set = refusal(() => unmarshall({ tags: { SS: ['Alex'] } }));
    expect([set.path, set.kind]).toEqual(['.tags', 'type SS']);
    expect(set.message).not.toContain('Alex');
  });
});
