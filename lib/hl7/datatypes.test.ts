import { runInNewContext } from 'node:vm';
import {
  codingSystemName,
  siFromNumber,
  ceFromCodedValue,
  ceFromText,
  cxFromIdentifier,
  dtFromDate,
  eiFromIdentifier,
  hdFromNamespace,
  isNumericText,
  nmFromNumber,
  plFromLocation,
  tsFromDateTime,
  tsFromPartialDateTime,
  xadFromAddress,
  xcnFromClinician,
  xpnFromPersonName,
  xtnFromEmail,
  xtnFromPhone,
} from './datatypes';
import { Hl7EncodingError } from './errors';
import { type Components, Segment } from './segment';

/** The components as they are written into a field. */
function written(components: Components): string {
  return new Segment('ZZZ').set(1, components).fieldText(1);
}

describe('XPN', () => {
  test('FAMILY^GIVEN', () => {
    expect(written(xpnFromPersonName({ family: 'Doe', given: 'Jane' }))).toBe('Doe^Jane^^^^^L');
  });
  test('all parts: family^given^middle^suffix^prefix', () => {
    expect(written(xpnFromPersonName({ family: 'Doe', given: 'Jane', middle: 'Q', suffix: 'Jr', prefix: 'Dr' }))).toBe('Doe^Jane^Q^Jr^Dr^^L');
  });
  test('escapes delimiters inside a part', () => {
    expect(written(xpnFromPersonName({ family: "O'Neil^Smith", given: 'A&B' }))).toBe("O'Neil\\S\\Smith^A\\T\\B^^^^^L");
  });
});

describe('XCN', () => {
  test('ID^FAMILY^GIVEN^MIDDLE^SUFFIX^PREFIX^^^AUTHORITY^L^^^PRN', () => {
    expect(written(xcnFromClinician({ id: '1234', name: { family: 'House', given: 'Gregory', prefix: 'Dr' } }, 'CLINIC'))).toBe(
      '1234^House^Gregory^^^Dr^^^CLINIC^L^^^PRN',
    );
  });
  test('without an id: no authority and no identifier type', () => {
    expect(written(xcnFromClinician({ name: { family: 'House' } }, 'CLINIC'))).toBe('^House^^^^^^^^L');
  });
  test('an id over 15 characters in its short form (never truncated)', () => {
    const xcn = written(xcnFromClinician({ id: 'demo-clinician-1', name: { family: 'House' } }, 'CLINIC'));
    const id = xcn.split('^')[0]!;
    expect(id).toMatch(/^_[0-9A-Z]{14}$/);
    expect(written(xcnFromClinician({ id: 'demo-clinician-2', name: { family: 'House' } }, 'CLINIC')).split('^')[0]).not.toBe(id);
    expect(written(xcnFromClinician({ id: 'demo-clinician-1', name: { family: 'Other' } }, 'X')).split('^')[0]).toBe(id);
  });
});

describe('XAD', () => {
  test('street as the first subcomponent of XAD-1, then other designation, city, state, zip, country', () => {
    expect(written(xadFromAddress({ line1: '1 Main St', line2: 'Apt 2', city: 'Springfield', state: 'IL', postalCode: '62701', country: 'USA' }))).toBe(
      '1 Main St^Apt 2^Springfield^IL^62701^USA^H',
    );
  });
  test('a & in the street is escaped, not a subcomponent separator', () => {
    expect(written(xadFromAddress({ line1: 'Corner of 1st & Main', city: 'X' }))).toBe('Corner of 1st \\T\\ Main^^X^^^^H');
  });
});

describe('XTN', () => {
  test('phone: NUMBER^USE^PH', () => {
    expect(written(xtnFromPhone('+1 555 0100', 'PRN'))).toBe('+1 555 0100^PRN^PH');
    expect(written(xtnFromPhone('555'))).toBe('555^^PH');
  });
  test('e-mail in XTN-4 with XTN-2 NET and XTN-3 Internet', () => {
    expect(written(xtnFromEmail('jane&john@example.com'))).toBe('^NET^Internet^jane\\T\\john@example.com');
  });
});

describe('CX', () => {
  test('MRN^^^AUTHORITY^MR', () => {
    expect(written(cxFromIdentifier('12345', 'HOSP', 'MR'))).toBe('12345^^^HOSP^MR');
  });
  test('without an authority', () => {
    expect(written(cxFromIdentifier('E-1', undefined, 'VN'))).toBe('E-1^^^^VN');
  });
  test('an id holding HL7 delimiters goes in its short form; the authority is escaped', () => {
    expect(written(cxFromIdentifier('A^1|2', 'H~X', 'MR'))).toMatch(/^_[0-9A-Z]{14}\^\^\^H\\R\\X\^MR$/);
  });
});

describe('CE / CWE', () => {
  test('CODE^TEXT^SYSTEM', () => {
    expect(written(ceFromCodedValue({ code: 'E11.9', display: 'Type 2 diabetes mellitus without complications', system: 'I10' }))).toBe(
      'E11.9^Type 2 diabetes mellitus without complications^I10C',
    );
  });
  test('code alone', () => {
    expect(written(ceFromCodedValue({ code: 'M' }))).toBe('M');
  });
  test('text alone', () => {
    expect(written(ceFromText('Chest pain\non exertion'))).toBe('^Chest pain on exertion');
  });
});

describe('EI, PL, HD', () => {
  test('single component values', () => {
    expect(written(eiFromIdentifier('note-1', 'CLINIC'))).toBe('note-1^CLINIC');
    expect(written(plFromLocation('Ward 3 | Bed 2'))).toBe('Ward 3 \\F\\ Bed 2');
    expect(written(hdFromNamespace('CHART'))).toBe('CHART');
  });
});

describe('TS', () => {
  test('writes UTC yyyyMMddHHmmss from an ISO string with Z', () => {
    expect(tsFromDateTime('2024-03-01T09:30:15Z')).toBe('20240301093015+0000');
  });
  test('converts an offset to UTC (across a day boundary)', () => {
    expect(tsFromDateTime('2024-03-01T01:30:00+02:00')).toBe('20240229233000+0000');
    expect(tsFromDateTime('2024-12-31T22:00:00-05:00')).toBe('20250101030000+0000');
    expect(tsFromDateTime('2024-03-01T01:30:00+0530')).toBe('20240229200000+0000');
  });
  test('drops fractions of a second; seconds are optional', () => {
    expect(tsFromDateTime('2024-03-01T09:30:15.999Z')).toBe('20240301093015+0000');
    expect(tsFromDateTime('2024-03-01T09:30Z')).toBe('20240301093000+0000');
  });
  test('from a Date, in UTC', () => {
    expect(tsFromDateTime(new Date(Date.UTC(2023, 0, 2, 3, 4, 5)))).toBe('20230102030405+0000');
  });
  test.each(['2024-03-01', '2024-03-01T09:30:00', '2024-02-30T00:00:00Z', '2024-03-01T24:00:00Z', 'yesterday', '', '2024-03-01T09:30:00+25:00'])(
    'refuses %j',
    (value) => {
      expect(() => tsFromDateTime(value, 'note.createdAt')).toThrow(Hl7EncodingError);
      expect(() => tsFromDateTime(value, 'note.createdAt')).toThrow(/^note\.createdAt: /);
    },
  );
  test('from a Date made in another realm (vm context), where instanceof Date is false', () => {
    const foreign = runInNewContext('new Date(Date.UTC(2023, 0, 2, 3, 4, 5))') as Date;
    expect(foreign instanceof Date).toBe(false);
    expect(tsFromDateTime(foreign)).toBe('20230102030405+0000');
  });
  test('refuses an invalid Date', () => {
    expect(() => tsFromDateTime(new Date(Number.NaN))).toThrow(Hl7EncodingError);
  });
  test('the toISOString form (read without the regular expression) gives what the Date gives, over 2,000 instants', () => {
    for (let index = 0; index < 2000; index += 1) {
      const date = new Date(-62_135_596_800_000 /* 0001-01-01 */ + ((index * 7919) % 2000) * 157_700_000_000 + index * 1_234_567);
      expect(tsFromDateTime(date.toISOString())).toBe(tsFromDateTime(date));
      expect(tsFromDateTime(date.toISOString().replace(/\.\d+Z$/, 'Z'))).toBe(tsFromDateTime(date));
    }
  });
  test('times with an offset (read without the regular expression) are the same instant in UTC, over 2,000 instants and offsets', () => {
    for (let index = 0; index < 2000; index += 1) {
      const second = Math.floor((Date.UTC(2000, 0, 1) + index * 9_876_543_210) / 1000) * 1000;
      const offsetMinutes = ((index * 37) % (24 * 60 * 2 - 1)) - (24 * 60 - 1); // -23:59 .. +23:59
      const local = new Date(second + offsetMinutes * 60_000).toISOString().slice(0, 19);
      const sign = offsetMinutes < 0 ? '-' : '+';
      const zone = `${sign}${String(Math.floor(Math.abs(offsetMinutes) / 60)).padStart(2, '0')}:${String(Math.abs(offsetMinutes) % 60).padStart(2, '0')}`;
      expect(tsFromDateTime(`${local}${zone}`)).toBe(tsFromDateTime(new Date(second)));
      expect(tsFromDateTime(`${local}.5${zone}`)).toBe(tsFromDateTime(new Date(second)));
    }
  });
  test('near misses of the toISOString form are read as ISO_DATE_TIME reads them', () => {
    // accepted by the regular expression (any case, one or more fraction digits)
    expect(tsFromDateTime('2024-03-01t09:30:15z')).toBe('20240301093015+0000');
    expect(tsFromDateTime('2024-03-01T09:30:15.1234567Z')).toBe('20240301093015+0000');
    expect(tsFromDateTime('2024-03-01T09:30:15.1Z')).toBe('20240301093015+0000');
    expect(tsFromDateTime('2024-03-01T09:30:15+0130')).toBe('20240301080015+0000');
    // refused
    for (const value of [
      '2024-03-01T09:30:15+24:00',
      '2024-03-01T09:30:15+23:60',
      '2024-03-01T09:30:15+3:00',
      '2024-03-01T09:30:15*01:00',
      '2024-03-01T09:30:15.+01:00',
      '2024-03-01T09:30:15+01:0a',
      '2024-03-01T09:30:15.Z',
      '2024-03-01T09:30:15Z ',
      '2024-03-01T09:30:1aZ',
      '2024-03-01 09:30:15Z',
      '2024-03-01T09-30-15Z',
      '2024-13-01T09:30:15Z',
      '20240301T093015Z',
      '2024-03-01T09:30:15.12aZ',
    ]) {
      expect(() => tsFromDateTime(value)).toThrow(Hl7EncodingError);
    }
  });
});

describe('DT', () => {
  test('yyyyMMdd from YYYY-MM-DD', () => {
    expect(dtFromDate('1980-02-29')).toBe('19800229');
  });
  test.each([
    '1981-02-29',
    '1980-13-01',
    '19800101',
    '1980-1-1',
    '1980-01-01T00:00:00Z',
    '',
    '0000-01-01',
    '1980-00-10',
    '1980-04-31',
    '1980-04-00',
    ' 1980-01-01',
    '1980-01-01\n',
    '1980/01/01',
    '198a-01-01',
    '1980-01-0a',
    42 as unknown as string,
  ])('refuses %j', (value) => {
    expect(() => dtFromDate(value, 'patient.birthDate')).toThrow(/^patient\.birthDate: /);
  });
  test('the first and last days of months and years', () => {
    expect(['0001-01-01', '2000-02-29', '2024-12-31', '9999-12-31'].map((value) => dtFromDate(value))).toEqual([
      '00010101',
      '20000229',
      '20241231',
      '99991231',
    ]);
  });
});

describe('NM', () => {
  test('numbers with an NM form', () => {
    expect(nmFromNumber(12)).toBe('12');
    expect(nmFromNumber(-0.5)).toBe('-0.5');
    expect(nmFromNumber(3.25)).toBe('3.25');
  });
  test('no NM form for NaN, infinities and exponent notation', () => {
    expect(nmFromNumber(Number.NaN)).toBeUndefined();
    expect(nmFromNumber(Number.POSITIVE_INFINITY)).toBeUndefined();
    expect(nmFromNumber(1e21)).toBeUndefined();
    expect(nmFromNumber(1e-7)).toBeUndefined();
  });
  test('isNumericText', () => {
    expect(['1', '+1', '-1.5', '.5', '5.'].every(isNumericText)).toBe(true);
    expect(['', ' 1', '1e3', '1,5', '--1', 'abc', '<5'].some(isNumericText)).toBe(false);
  });
});

describe('tsFromPartialDateTime (issue 27: precision and the sender offset kept)', () => {
  test.each([
    ['2024', '2024'],
    ['2024-11', '202411'],
    ['2024-11-07', '20241107'],
    ['2024-11-07T08:30-06:00', '202411070830-0600'],
    ['2024-11-07T08:30:15Z', '20241107083015+0000'],
    ['2024-11-07T08:30:15.123456+0530', '20241107083015.1234+0530'],
    ['2024-11-07T08:30', '202411070830'],
    ['2024-11-07T08-06:00', '2024110708-0600'],
    ['2024-11-07T08Z', '2024110708+0000'],
  ])('%s -> %s', (input, expected) => {
    expect(tsFromPartialDateTime(input)).toBe(expected);
  });

  test.each(['2024-13', '2024-02-30', '2024-11-07T24:00Z', '20241107', '2024-11-07 08:30', ''])('%s is refused', (input) => {
    expect(() => tsFromPartialDateTime(input, 'order.collectedAt')).toThrow(Hl7EncodingError);
  });

  test('the common form (seconds, Z or ±HH:MM; read at fixed places) gives what the general form gives, valid or not', () => {
    // the general reading, as the function reads every other form (PARTIAL_DATE_TIME), written here independently
    const general = (value: string): string => {
      const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(value)!;
      const [, y, mo, d, h, mi, s, fraction, zone] = m;
      const date = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
      const valid =
        Number(y) >= 1 &&
        date.getUTCMonth() === Number(mo) - 1 &&
        date.getUTCDate() === Number(d) &&
        Number(mo) >= 1 &&
        Number(mo) <= 12 &&
        Number(h) <= 23 &&
        Number(mi) <= 59 &&
        Number(s) <= 59;
      if (!valid) return 'refused';
      return `${y}${mo}${d}${h}${mi}${s}${fraction === undefined ? '' : `.${fraction.slice(0, 4)}`}${zone === 'Z' ? '+0000' : zone!.replace(':', '')}`;
    };
    const outcome = (value: string): string => {
      try {
        return tsFromPartialDateTime(value);
      } catch (error) {
        if (error instanceof Hl7EncodingError) return 'refused';
        throw error;
      }
    };
    let seed = 7;
    const next = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const two = (n: number) => String(n).padStart(2, '0');
    const values = ['2024-02-29T23:59:59Z', '2023-02-29T10:00:00Z', '0000-01-01T00:00:00Z', '2024-11-07T08:30:15.123456789-23:59', '2024-11-07T08:30:60+05:30'];
    for (let i = 0; i < 3000; i += 1) {
      const fraction = next(3) === 0 ? '' : `.${'1234567890'.slice(0, 1 + next(9))}`;
      const zone = next(3) === 0 ? 'Z' : `${next(2) ? '+' : '-'}${two(next(24))}:${two(next(60))}`;
      values.push(
        `${String(1900 + next(200)).padStart(4, '0')}-${two(next(14))}-${two(next(33))}T${two(next(25))}:${two(next(61))}:${two(next(61))}${fraction}${zone}`,
      );
    }
    for (const value of values) expect({ value, out: outcome(value) }).toEqual({ value, out: general(value) });
  });
});

describe('codingSystemName', () => {
  // the definition the fast path keeps: trimmed and upper-cased, I10 / ICD-10-CM / ICD10CM are I10C, anything else as stored
  const byDefinition = (system: string): string => (['I10', 'ICD-10-CM', 'ICD10CM'].includes(system.trim().toUpperCase()) ? 'I10C' : system);

  test("renames the chart's ICD-10-CM names, whatever their case and white space, and keeps every other name", () => {
    const names = [
      'I10',
      'i10',
      ' I10 ',
      'I10\u00a0',
      '\u2028icd-10-cm',
      'ICD-10-CM',
      'icd10cm',
      'ICD10CM\t',
      'LN',
      'SNM',
      'HL70004',
      'I9C',
      'I10C',
      'L',
      '',
      ' ',
      'ICD-10-PCS',
      'ICD10CMX',
      'X I10',
    ];
    for (const name of names) {
      expect([name, codingSystemName(name)]).toEqual([name, byDefinition(name)]);
    }
    expect(codingSystemName(undefined)).toBeUndefined();
  });
});

test('siFromNumber: the set id as written, from the table escaped at load and beyond it', () => {
  expect([1, 2, 10, 1023, 1024, 123456].map((value) => siFromNumber(value))).toEqual(['1', '2', '10', '1023', '1024', '123456']);
});
