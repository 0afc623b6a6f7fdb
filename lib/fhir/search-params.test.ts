import type { DiagnosticReport } from '@medplum/fhirtypes';
import { labObservationId, labObservationIdsOf, labObservations } from './lab-observation';
import { dateRange, matchesDate, matchesToken, parseDateCondition, parseTokenList, type DateCondition, type TokenValue } from './search-params';

const cond = (raw: string): DateCondition => {
  const parsed = parseDateCondition(raw);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.value;
};

describe('token values', () => {
  it.each([
    ['2345-7', [{ code: '2345-7' }]],
    ['http://loinc.org|2345-7', [{ system: 'http://loinc.org', code: '2345-7' }]],
    ['|2345-7', [{ system: '', code: '2345-7' }]],
    ['http://loinc.org|', [{ system: 'http://loinc.org' }]],
    ['a,b|c', [{ code: 'a' }, { system: 'b', code: 'c' }]],
    ['a\\,b', [{ code: 'a,b' }]],
  ])('%s', (raw, expected) => {
    expect(parseTokenList(raw)).toEqual({ ok: true, value: expected });
  });

  it.each(['', ',', '|', 'a|b|c'])('%j is refused', (raw) => {
    expect(parseTokenList(raw).ok).toBe(false);
  });

  it('matches codings by system and code; `|code` only codings without a system', () => {
    const concept = { coding: [{ system: 'http://loinc.org', code: '2345-7' }, { code: 'GLU' }] };
    const match = (raw: string) => matchesToken([concept], (parseTokenList(raw) as { value: TokenValue[] }).value);
    expect(match('2345-7')).toBe(true);
    expect(match('http://loinc.org|2345-7')).toBe(true);
    expect(match('http://loinc.org|')).toBe(true);
    expect(match('|GLU')).toBe(true);
    expect(match('|2345-7')).toBe(false);
    expect(match('http://snomed.info/sct|2345-7')).toBe(false);
    expect(match('2345-7x,GLU')).toBe(true);
    expect(matchesToken([{ text: 'Glucose' }], [{ code: 'Glucose' }])).toBe(false);
  });
});

describe('dates', () => {
  it('a value covers the range of its precision', () => {
    const iso = (raw: string) => {
      const r = dateRange(raw)!;
      return [new Date(r.start).toISOString(), new Date(r.end).toISOString()];
    };
    expect(iso('2024')).toEqual(['2024-01-01T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
    expect(iso('2024-02')).toEqual(['2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z']);
    expect(iso('2024-12-31')).toEqual(['2024-12-31T00:00:00.000Z', '2025-01-01T00:00:00.000Z']);
    expect(iso('2024-06-15T12:00Z')).toEqual(['2024-06-15T12:00:00.000Z', '2024-06-15T12:01:00.000Z']);
    expect(iso('2024-06-15T12:00:00+02:00')).toEqual(['2024-06-15T10:00:00.000Z', '2024-06-15T10:00:01.000Z']);
    expect(iso('2024-06-15T12:00:00.5Z')).toEqual(['2024-06-15T12:00:00.500Z', '2024-06-15T12:00:00.600Z']);
    expect(iso('0024')).toEqual(['0024-01-01T00:00:00.000Z', '0025-01-01T00:00:00.000Z']);
  });

  it.each(['2024-13', '2023-02-29', '2024-06-15T24:00Z', '24', '2024-6', 'yesterday', '2024-06-15T12:00+15:00'])('%s is no date', (raw) => {
    expect(dateRange(raw)).toBeUndefined();
  });

  it.each(['ap2024', 'xx2024', 'ge', 'ge2024-13'])('condition %s is refused', (raw) => {
    expect(parseDateCondition(raw).ok).toBe(false);
  });

  // a resource at 2024-06-15T12:00:00Z (one second) and one on the day 2024-06-15
  it.each([
    ['2024-06', true, true],
    ['eq2024-06-15', true, true],
    ['eq2024-06-15T12:00Z', true, false],
    ['ne2024-06-15T12:00Z', false, true],
    ['gt2024-06-15', false, false],
    ['gt2024-06-15T11:00Z', true, true],
    ['lt2024-06-15T12:00Z', false, true],
    ['ge2024-06-15', true, true],
    ['ge2024-06-15T12:00:01Z', false, true],
    ['le2024-06-15T12:00Z', true, true],
    ['le2024-06-14', false, false],
    ['sa2024-06-14', true, true],
    ['sa2024-06-15T11:59Z', true, false],
    ['eb2024-06-16', true, true],
    ['eb2024-06-15T12:00Z', false, false],
  ])('%s: instant %s, day %s', (raw, instant, day) => {
    expect(matchesDate('2024-06-15T12:00:00Z', [cond(raw)])).toBe(instant);
    expect(matchesDate('2024-06-15', [cond(raw)])).toBe(day);
  });

  it('conditions are AND; a resource without a date matches none; no condition matches all', () => {
    expect(matchesDate('2024-06-15', [cond('ge2024-01-01'), cond('lt2025')])).toBe(true);
    expect(matchesDate('2024-06-15', [cond('ge2024-01-01'), cond('lt2024-06')])).toBe(false);
    expect(matchesDate(undefined, [cond('ge2000')])).toBe(false);
    expect(matchesDate(undefined, [])).toBe(true);
  });
});

describe('lab Observations of a report', () => {
  const report: DiagnosticReport = {
    resourceType: 'DiagnosticReport',
    id: 'p-1..lr.5F0123456789abcdef0123456789abcdef',
    status: 'final',
    code: { text: 'Lab' },
    contained: [
      { resourceType: 'Specimen', id: 'specimen', subject: { reference: 'Patient/p-1' } },
      {
        resourceType: 'Observation',
        id: 'result-1',
        status: 'final',
        code: { text: 'Glucose' },
        specimen: { reference: '#specimen' },
      },
      { resourceType: 'Observation', id: 'result-2', status: 'final', code: { text: 'Sodium' } },
    ],
    result: [{ reference: '#result-1' }, { reference: '#result-2' }],
  };

  it('each contained Observation with the id `<report>..<n>` and the contained resources it refers to', () => {
    const observations = labObservations(report);
    expect(observations.map((o) => [o.n, o.observation.id])).toEqual([
      [1, 'p-1..lr.5F0123456789abcdef0123456789abcdef..1'],
      [2, 'p-1..lr.5F0123456789abcdef0123456789abcdef..2'],
    ]);
    expect(observations[0]!.observation.contained).toEqual([report.contained![0]]);
    expect(observations[0]!.observation.specimen).toEqual({ reference: '#specimen' });
    expect(observations[1]!.observation.contained).toBeUndefined();
  });

  it('ids read back; an assessment id, a position 0 and a non-canonical form are no lab Observation ids', () => {
    const id = labObservationId('p-1', 'lr_0123456789abcdef0123456789abcdef', 2);
    expect(id).toBe('p-1..lr.5F0123456789abcdef0123456789abcdef..2');
    expect(labObservationIdsOf(id)).toEqual({ patientId: 'p-1', resultId: 'lr_0123456789abcdef0123456789abcdef', n: 2 });
    expect(labObservationIdsOf('p-1..demo-assessment-1')).toBeUndefined();
    expect(labObservationIdsOf('p-1..lr.5F0123456789abcdef0123456789abcdef..0')).toBeUndefined();
    expect(labObservationIdsOf('p-1..lr.5F0123456789abcdef0123456789abcdef..02')).toBeUndefined();
    expect(labObservationIdsOf('p-1..lr.5F0123456789abcdef0123456789abcdef..x')).toBeUndefined();
  });
});
