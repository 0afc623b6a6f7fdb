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

describe('lab result validation: the optional fields of the lab model (issue 27)', () => {
  const fullResult = {
    testName: 'Potassium',
    result: '6.9',
    units: 'mmol/L',
    referenceRange: '3.5-5.1',
    code: '2823-3',
    codeSystem: 'LN',
    alternateCode: { code: 'K', display: 'Potassium', system: 'L' },
    valueType: 'NM',
    numericValue: '6.90',
    unitsCode: 'mmol/L',
    abnormalFlags: ['HH', 'A'],
    observationStatus: 'F',
    observedAt: '2024-03-01T08:15-06:00',
    performingOrganization: 'ACME Reference Lab',
    comments: ['Repeated and confirmed', 'Called to\nDr Smith'],
  };
  const order = {
    placerOrderNumber: { id: 'PL-1', namespace: 'EHR' },
    accessionNamespace: 'ACME-LAB',
    universalService: { code: '24323-8', display: 'Comprehensive metabolic panel', system: 'LN' },
    collectedAt: '2024-03-01',
    orderingProvider: { id: '1234', name: { family: 'Smith', given: 'John' } },
    orderStatus: 'F',
    specimen: { type: { code: '119297000', display: 'Blood specimen', system: 'SCT' }, collectedAt: '2024-03-01T08:00:00.5Z', id: { id: 'SP-1' } },
    comments: ['Hemolyzed'],
  };

  it('accepts every optional field beside the spec fields', () => {
    const body = valid({
      order,
      results: [
        fullResult,
        { testName: 'Creatinine', result: '<0.5', valueType: 'SN', structuredNumeric: { comparator: '<', value1: '0.5' } },
        { testName: 'Titer', result: '1:128', structuredNumeric: { value1: '1', separator: ':', value2: '128' } },
        { testName: 'Organism', result: 'E. coli', valueType: 'CWE', codedValue: { code: '112283007', display: 'Escherichia coli', system: 'SCT' } },
        { testName: 'Pathology', result: 'a\n\nb', valueType: 'TX', textLines: ['a', '', 'b'], observationStatus: 'W', observedAt: '2024' },
      ],
    });
    expect(labResultErrors(body, NOW)).toEqual([]);
    expect(acceptLabResult(body, NOW).results[0]).toEqual(fullResult);
  });

  it('answers every failing optional field by pointer: tables, shapes, times, text rules', () => {
    const body = valid({
      order: {
        ...order,
        orderStatus: 'Q',
        collectedAt: '2024-03-01T08:00',
        specimen: { collectedAt: '2024-02-30', extra: 1 },
        comments: ['bad\u0007bell'],
      },
      results: [
        {
          ...fullResult,
          abnormalFlags: ['HH', 'CRIT'],
          observationStatus: 'Q',
          numericValue: '6,9',
          observedAt: '2024-06-01T12:30:00Z',
          alternateCode: { display: 'no code' },
        },
        { testName: 'Creatinine', result: '<0.5', structuredNumeric: { comparator: '~', value1: 'x' }, abnormalFlags: 'H' },
        { testName: 'Old', result: '1', observedAt: '1899-12-31', performingOrganization: '---' },
      ],
    });
    expect(pointers(body).sort()).toEqual(
      [
        '/data/order/collectedAt',
        '/data/order/orderStatus',
        '/data/order/specimen',
        '/data/order/specimen/collectedAt',
        '/data/order/comments/0',
        '/data/results/0/abnormalFlags/1',
        '/data/results/0/observationStatus',
        '/data/results/0/numericValue',
        '/data/results/0/observedAt',
        '/data/results/0/alternateCode/code',
        '/data/results/1/structuredNumeric/comparator',
        '/data/results/1/structuredNumeric/value1',
        '/data/results/1/abnormalFlags',
        '/data/results/2/observedAt',
        '/data/results/2/performingOrganization',
      ].sort(),
    );
    const messages = Object.fromEntries(labResultErrors(body, NOW).map((e) => ['pointer' in e ? e.pointer : '', e.message]));
    expect(messages['/data/order/collectedAt']).toMatch(/precision/);
    expect(messages['/data/results/0/observedAt']).toBe('must not be more than 5 minutes in the future');
    expect(messages['/data/results/2/observedAt']).toBe('must be in 1900 or later');
    expect(messages['/data/results/0/abnormalFlags/1']).toMatch(/^must be one of: L, H, LL, HH/);
  });

  it('a date that is already today somewhere on earth is not in the future; tomorrow everywhere is', () => {
    expect(pointers(valid({ order: { collectedAt: '2024-06-02' } }))).toEqual([]);
    expect(pointers(valid({ order: { collectedAt: '2024-06-03' } }))).toEqual(['/data/order/collectedAt']);
    expect(pointers(valid({ order: { collectedAt: '2024-06-01T14:00+02:00' } }))).toEqual([]);
  });

  it('a body with only the spec fields means what it always meant', () => {
    const accepted = acceptLabResult(valid(), NOW);
    expect(accepted.body.data).not.toHaveProperty('order');
    expect(accepted.results).toEqual([{ testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' }]);
  });
});

describe('lab result validation: a code without a name, the reported time as written', () => {
  const withResult = (result: Record<string, unknown>) => valid({ results: [{ result: '98', ...result }] });

  it('testNameFrom "code" needs testName equal to code; "text" needs a code; anything else is refused', () => {
    expect(pointers(withResult({ testName: '2345-7', code: '2345-7', codeSystem: 'LN', testNameFrom: 'code' }))).toEqual([]);
    expect(pointers(withResult({ testName: 'Glucose', code: '2345-7', testNameFrom: 'text' }))).toEqual([]);
    expect(pointers(withResult({ testName: 'Glucose', code: '2345-7', testNameFrom: 'code' }))).toEqual(['/data/results/0/testNameFrom']);
    expect(pointers(withResult({ testName: 'Glucose', testNameFrom: 'text' }))).toEqual(['/data/results/0']);
    expect(pointers(withResult({ testName: 'Glucose', code: '2345-7', testNameFrom: 'display' }))).toEqual(['/data/results/0/testNameFrom']);
    expect(
      pointers(withResult({ testName: 'Hemoglobin, Blood', code: '718-7', testNameFrom: 'text', codeDisplay: 'Hemoglobin [Mass/volume] in Blood' })),
    ).toEqual([]);
    expect(pointers(withResult({ testName: '718-7', code: '718-7', testNameFrom: 'code', codeDisplay: 'Hemoglobin' }))).toEqual([
      '/data/results/0/codeDisplay',
    ]);
    expect(pointers(withResult({ testName: 'Hemoglobin', code: '718-7', codeDisplay: 'Hemoglobin' }))).toEqual(['/data/results/0']);
    // the spec's testName stays required, with or without a code
    expect(pointers(withResult({ code: '2345-7', testNameFrom: 'code' }))).toEqual(['/data/results/0/testName', '/data/results/0/testNameFrom']);
  });

  it('order.reportedAt: any precision; with a time of day, the instant ResultedDateUTC names (offset and minutes allowed)', () => {
    const at = (reportedAt: string, ResultedDateUTC = '2024-03-01T15:15:00Z') => pointers(valid({ ResultedDateUTC, order: { reportedAt } }));
    expect(at('2024-03-01T10:15:00-05:00')).toEqual([]);
    expect(at('2024-03-01T10:15-05:00')).toEqual([]);
    expect(at('2024-03-01T20:45:00.5+05:30', '2024-03-01T15:15:00.500Z')).toEqual([]);
    expect(at('2024-03-01T15:15:00.1234Z', '2024-03-01T15:15:00.123Z')).toEqual([]);
    expect(at('2024-03-01')).toEqual([]);
    expect(at('2024-03')).toEqual([]);
    expect(at('2024')).toEqual([]);
    // a date, month or year must contain the instant ResultedDateUTC names (else OBR-22 and FHIR issued disagree)
    expect(at('2020')).toEqual(['/data/order/reportedAt']);
    expect(at('2024-02')).toEqual(['/data/order/reportedAt']);
    expect(at('2024-03-03')).toEqual(['/data/order/reportedAt']);
    expect(at('2024-03-01T10:15:00-04:00')).toEqual(['/data/order/reportedAt']);
    expect(at('2024-03-01T10:16-05:00')).toEqual(['/data/order/reportedAt']);
    expect(at('2024-02-30')).toEqual(['/data/order/reportedAt']);
    expect(at('2024-03-01T10:15:00')).toEqual(['/data/order/reportedAt']);
    expect(at('2099-03-01')).toEqual(['/data/order/reportedAt']);
  });

  it('order.collectedEndAt: a real partial time, with collectedAt and not before it (at the coarser precision as written)', () => {
    const span = (collectedAt: string | undefined, collectedEndAt: string) =>
      pointers(valid({ order: { ...(collectedAt ? { collectedAt } : {}), collectedEndAt } }));
    expect(span('2024-03-01T07:00-06:00', '2024-03-02T07:00-06:00')).toEqual([]);
    expect(span('2024-03-01T07:00-06:00', '2024-03-01T13:00Z')).toEqual([]);
    expect(span('2024-03-01', '2024-03-01')).toEqual([]);
    expect(span('2024-03-01T07:00-06:00', '2024-03')).toEqual([]);
    expect(span('2024-03-01T23:30Z', '2024-03-01')).toEqual([]);
    // an end needs its start (OBR-8 ends the period OBR-7 starts)
    expect(span(undefined, '2024-03-01')).toEqual(['/data/order/collectedEndAt']);
    // no zone widening: a written date after the end's written date is a period ending before it starts
    expect(span('2024-03-02', '2024-03-01T20:00Z')).toEqual(['/data/order/collectedEndAt']);
    expect(span('2024-03-02T01:00Z', '2024-03-01')).toEqual(['/data/order/collectedEndAt']);
    expect(span('2024-03-02T07:00-06:00', '2024-03-01T07:00-06:00')).toEqual(['/data/order/collectedEndAt']);
    expect(span('2024-03', '2024-01')).toEqual(['/data/order/collectedEndAt']);
    expect(span('2024-03-01', '2024-02-30')).toEqual(['/data/order/collectedEndAt']);
  });
});
