import { Hl7EncodingError } from './errors';
import { chartTimeAsWritten, tsFromChartTime } from './segments';

describe('tsFromChartTime: a chart time as the chart stores it', () => {
  it.each([
    ['2025-12-31T01:05:00-08:00', '20251231010500-0800'],
    ['2025-12-31T14:35:00+05:30', '20251231143500+0530'],
    ['2024-03-05T10:30:00+01:00', '20240305103000+0100'],
    ['2024-01-15T09:40:00Z', '20240115094000+0000'],
    ['2024-01-15T09:40:00.25-05:00', '20240115094000.25-0500'],
    ['2024-01-15T23:59:59+14:00', '20240115235959+1400'],
  ])('%s -> %s (offset and precision kept, never moved to UTC)', (chartTime, ts) => {
    expect(tsFromChartTime(chartTime, 'note.createdAt')).toBe(ts);
  });

  it.each(['2024-01-15T09:40:00', '2024-01-15', '2024-01', '2024', '2024-01-15T09:40:00+25:00', 'yesterday', ''])(
    '%s: refused (every chart TS carries an explicit offset), naming the field',
    (value) => {
      expect(() => tsFromChartTime(value, 'encounter.admitAt')).toThrow(Hl7EncodingError);
      expect(() => tsFromChartTime(value, 'encounter.admitAt')).toThrow(/encounter\.admitAt/);
    },
  );

  it('refuses a time with an offset that is not a calendar time (30 February)', () => {
    expect(() => tsFromChartTime('2024-02-30T10:00:00Z', 'note.createdAt')).toThrow(Hl7EncodingError);
  });
});

describe('chartTimeAsWritten: a chart time for the observation groups', () => {
  it('hands the time on as written; nothing for an absent time', () => {
    expect(chartTimeAsWritten('2025-12-31T01:05:00-08:00', 'encounter.admitAt')).toEqual({ asSent: '2025-12-31T01:05:00-08:00' });
    expect(chartTimeAsWritten(undefined, 'encounter.dischargeAt')).toBeUndefined();
  });

  it('refuses a time without an offset, naming the field', () => {
    expect(() => chartTimeAsWritten('2025-12-31T01:05:00', 'assessment.performedAt')).toThrow(/assessment\.performedAt/);
  });
});
