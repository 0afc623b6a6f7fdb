import fc from 'fast-check';
import { ValidationFailedError } from '../domain-errors';
import { problemForError } from '../http/domain-problems';
import { canonicalJson } from './canonical-json';
import { ResultKeys } from './lookup-keys';
import { normalizeStatus, statusRank } from './status';
import { acceptLabResult, labResultErrors, resultedAtKey } from './validation';

const NOW = new Date('2024-06-01T12:00:00Z');

function valid(overrides: Record<string, unknown> = {}) {
  return {
    data: {
      senderID: 'demo-lab',
      patientID: 'demo-patient-1',
      accessionNumber: 'ACC-1',
      status: 'final',
      ResultedDateUTC: '2024-03-01T09:30:00Z',
      results: { testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' },
      ...overrides,
    },
  };
}

const pointers = (body: unknown) => labResultErrors(body, NOW).map((e) => ('pointer' in e ? e.pointer : ''));

describe('lab result validation', () => {
  it('accepts a minimal body, one result object, and stores results as an array', () => {
    const accepted = acceptLabResult(valid(), NOW);
    expect(accepted.status).toBe('final');
    expect(accepted.results).toEqual([{ testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' }]);
    expect(accepted.resultedAtKey).toBe('2024-03-01T09:30:00.000000000Z');
  });

  it('accepts an array of results, empty units, optional fields absent, unknown extra fields', () => {
    const body = {
      extraTop: 1,
      data: {
        ...valid().data,
        results: [
          { testName: 'A', result: '1', units: '' },
          { testName: 'B', result: 'neg', extra: { x: 1 } },
        ],
        lisVersion: '7.2',
      },
    };
    expect(labResultErrors(body, NOW)).toEqual([]);
    expect(acceptLabResult(body, NOW).body).toBe(body);
  });

  it('lists every missing required field by JSON pointer', () => {
    expect(pointers({ data: {} }).sort()).toEqual(
      ['/data/senderID', '/data/patientID', '/data/accessionNumber', '/data/status', '/data/ResultedDateUTC', '/data/results'].sort(),
    );
    expect(pointers({})).toEqual(['/data']);
    expect(pointers([])).toEqual(['/']);
  });

  it('lists nested failures in results and reports', () => {
    const body = valid({
      results: [{ testName: '', result: 1 }, { result: 'x' }],
      reports: [{ source: 'base64', type: 'pdf', name: 'r.pdf', data: 'not base64!' }, { source: 'text' }],
    });
    expect(pointers(body)).toEqual([
      '/data/results/0/testName',
      '/data/results/0/result',
      '/data/results/1/testName',
      '/data/reports/1/type',
      '/data/reports/1/name',
      '/data/reports/1/data',
      '/data/reports/0/data',
    ]);
  });

  it.each([
    ['2024-03-01T09:30:00Z', true],
    ['2024-03-01T09:30:00.123456789Z', true],
    ['2024-02-29T00:00:00Z', true],
    ['2023-02-29T00:00:00Z', false],
    ['2024-02-30T00:00:00Z', false],
    ['2024-03-01T24:00:00Z', false],
    ['2024-03-01T23:59:60Z', false],
    ['2024-03-01T09:30:00+00:00', false],
    ['2024-03-01T09:30:00', false],
    ['2024-03-01', false],
    ['1899-12-31T23:59:59Z', false],
    ['2024-06-01T12:05:00Z', true],
    ['2024-06-01T12:05:00.001Z', false],
    ['2024-06-01T23:00:00Z', false],
  ])('ResultedDateUTC %s valid=%s', (value, ok) => {
    expect(pointers(valid({ ResultedDateUTC: value })).includes('/data/ResultedDateUTC')).toBe(!ok);
  });

  it('orders instants by their keys', () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
        fc.date({ min: new Date('1900-01-01T00:00:00Z'), max: new Date('9999-12-31T23:59:59Z'), noInvalidDate: true }),
        (a, b) => {
          const ka = resultedAtKey(a.toISOString())!.key;
          const kb = resultedAtKey(b.toISOString())!.key;
          expect(ka < kb ? -1 : ka > kb ? 1 : 0).toBe(Math.sign(a.getTime() - b.getTime()));
        },
      ),
    );
  });

  it('orders fractional seconds of any length', () => {
    expect(resultedAtKey('2024-01-01T00:00:00.5Z')!.key > resultedAtKey('2024-01-01T00:00:00.45Z')!.key).toBe(true);
    expect(resultedAtKey('2024-01-01T00:00:00Z')!.key < resultedAtKey('2024-01-01T00:00:00.000000001Z')!.key).toBe(true);
  });

  it('accepts the status vocabulary case-insensitively and refuses anything else with the allowed values', () => {
    for (const [input, stored] of [
      ['Final', 'final'],
      ['F', 'final'],
      ['p', 'preliminary'],
      ['PRELIMINARY', 'preliminary'],
      ['c', 'corrected'],
      ['Amended', 'amended'],
      ['x', 'cancelled'],
      ['Canceled', 'cancelled'],
    ] as const) {
      expect(acceptLabResult(valid({ status: input }), NOW).status).toBe(stored);
    }
    const errors = labResultErrors(valid({ status: 'done' }), NOW);
    expect(errors).toEqual([{ pointer: '/data/status', message: expect.stringContaining('preliminary, final, corrected, amended, cancelled') }]);
    expect(normalizeStatus('R')).toBeUndefined();
    expect(statusRank('final')).toBeGreaterThan(statusRank('preliminary'));
    expect(statusRank('corrected')).toBeGreaterThan(statusRank('final'));
    expect(statusRank('amended')).toBe(statusRank('corrected'));
    expect(statusRank('cancelled')).toBe(statusRank('corrected'));
  });

  it('caps identifier lengths and characters without echoing values', () => {
    const secret = 'Zebra, Jane 1970';
    const errors = labResultErrors(valid({ patientID: 'p'.repeat(129), accessionNumber: ' lead', senderID: secret + '\n' }), NOW);
    expect(errors.map((e) => ('pointer' in e ? e.pointer : ''))).toEqual(['/data/senderID', '/data/patientID', '/data/accessionNumber']);
    expect(JSON.stringify(errors)).not.toContain('Zebra');
    expect(acceptLabResult(valid({ patientID: 'p'.repeat(128) }), NOW)).toBeTruthy();
  });

  it('requires base64 report data only when the source says base64 (any case)', () => {
    const report = (source: string, data: string) => valid({ reports: [{ source, type: 'pdf', name: 'a.pdf', data }] });
    expect(pointers(report('base64', 'SGVsbG8='))).toEqual([]);
    expect(pointers(report('BASE64', 'SGVsbG8='))).toEqual([]);
    expect(pointers(report('Base64', 'SGVsbG8'))).toEqual(['/data/reports/0/data']);
    expect(pointers(report('base64', 'SGVs\nbG8='))).toEqual(['/data/reports/0/data']);
    expect(pointers(report('text', 'not base64 at all'))).toEqual([]);
  });

  it('throws one ValidationFailedError with every error, answered as one 400 problem', () => {
    try {
      acceptLabResult({ data: { status: 'nope' } }, NOW);
      throw new Error('expected a validation error');
    } catch (error) {
      expect(error).toBeInstanceOf(ValidationFailedError);
      expect((error as ValidationFailedError).errors.length).toBe(6);
      const { problem } = problemForError(error);
      expect(problem.status).toBe(400);
      expect(problem.toBody('r1')).toMatchObject({ type: '/problems/validation-error', detail: 'the lab result failed validation' });
      expect(problem.extras.errors!.length).toBe(6);
    }
  });
});

describe('canonical JSON and keyed ids', () => {
  it('ignores key order and whitespace, keeps array order', () => {
    expect(canonicalJson(JSON.parse('{"b": [2, 1], "a": {"d": null, "c": "x"}}'))).toBe('{"a":{"c":"x","d":null},"b":[2,1]}');
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(JSON.parse(canonicalJson(value))).toEqual(JSON.parse(JSON.stringify(value)));
      }),
    );
  });

  it('derives stable, keyed, unambiguous ids', () => {
    const a = new ResultKeys(Buffer.alloc(32, 1));
    const b = new ResultKeys(Buffer.alloc(32, 2));
    expect(a.resultId('lab', 'ACC-1')).toBe(a.resultId('lab', 'ACC-1'));
    expect(a.resultId('lab', 'ACC-1')).not.toBe(b.resultId('lab', 'ACC-1'));
    expect(a.resultId('lab', 'ACC-1')).not.toBe(a.resultId('labA', 'CC-1'));
    expect(a.resultId('lab', 'ACC-1')).toMatch(/^lr_[0-9a-f]{32}$/);
    expect(a.patientKey('demo-patient-1')).toMatch(/^PATIENT#[0-9a-f]{64}$/);
    expect(a.idempotencyKey('receiveTestData', 'p1', 'r')).not.toBe(a.idempotencyKey('receiveTestData', 'p2', 'r'));
  });
});
