/**
 * ORU^R01 -> lab model (issue 27): every field of the model a sender fills is in the lab body intake
 * stores (order, per observation codes, typed values, units, flags, status, time, organisation,
 * comments), times keep their precision and are read in the partner's zone.
 */
import { parseHl7Message } from '../hl7/parser';
import { AckRejection } from './ack-rejection';
import { acceptLabResult, labResultErrors } from '../results/validation';
import { instantFromTs, isTimeZone, partialFromTs } from './hl7-values';
import { intakeMappings } from './message-handlers';

const NOW = new Date('2024-12-01T12:00:00Z');

function bodyOf(segments: string[], timeZone?: string) {
  const message = parseHl7Message(segments.join('\r') + '\r');
  const groups = intakeMappings.observationGroups(message);
  return groups.map((group) => intakeMappings.labBody(group, 'ACME-LIS', 'patient-1', message, timeZone));
}

/** A segment with the given fields (by HL7 field number) filled, the others empty. */
function seg(name: string, fields: Record<number, string>): string {
  const last = Math.max(...Object.keys(fields).map(Number));
  return [name, ...Array.from({ length: last }, (_, i) => fields[i + 1] ?? '')].join('|');
}

const MSH = 'MSH|^~\\&|LIS|ACME-LIS|INTEROP|CLINIC|20241107093000||ORU^R01^ORU_R01|MSG1|P|2.5.1';
const PID = 'PID|1||MRN1^^^ACME^MR||Doe^Jane||19700101|F';

const FULL = [
  MSH,
  PID,
  'ORC|RE|PL-99^EHR^2.16.840.1.1^ISO',
  seg('OBR', {
    1: '1',
    2: 'PL-1^EHR-ORDERS',
    3: 'ACC-1^ACME-LAB^2.16.840.1.113883.3.1^ISO',
    4: '24323-8^Comprehensive metabolic panel^LN^CMP^CMP panel^L',
    7: '20241107083000',
    16: '1234^Smith^John^A^^Dr',
    22: '20241107110000-0600',
    25: 'F',
  }),
  'NTE|1|L|Specimen slightly hemolyzed~second line',
  'NTE|2|L|Called to Dr Smith',
  seg('OBX', {
    1: '1',
    2: 'NM',
    3: '2823-3^Potassium^LN^K^Potassium serum^L',
    5: '6.90',
    6: 'mmol/L^millimole per liter^UCUM',
    7: '3.5-5.1',
    8: 'HH~A',
    11: 'F',
    14: '20241107081500-0600',
    23: 'ACME Reference Lab^L^^^^CLIA&2.16.840.1.113883.4.7&ISO^XX^^^05D0000000',
  }),
  'NTE|1|L|Repeated and confirmed',
  'OBX|2|SN|2160-0^Creatinine^LN||<^0.5|mg/dL^^L|0.6-1.2|L|||C|||202411070815',
  'OBX|3|SN|5778-6^Titer^LN||^1^:^128||||||F',
  'OBX|4|CWE|600-7^Bacteria identified^LN||112283007^Escherichia coli^SCT||||||P|||20241107',
  'OBX|5|TX|11526-1^Pathology study^LN||Line one~~Line three||||||W',
  'OBX|6|FT|48767-8^Annotation^LN||Formatted text||||||X',
  seg('SPM', { 1: '1', 2: '^SP-77&ACME-LAB&2.16.840.1.113883.3.1&ISO', 4: '119297000^Blood specimen^SCT', 17: '20241107080000-0600' }),
];

describe('ORU^R01 -> lab model', () => {
  it('fills the order (ORC/OBR/SPM/NTE) and every observation field', () => {
    const [body] = bodyOf(FULL, 'America/Chicago');
    const data = body!.data as Record<string, unknown>;
    expect(data.accessionNumber).toBe('ACC-1');
    expect(data.ResultedDateUTC).toBe('2024-11-07T17:00:00Z');
    expect(data.order).toEqual({
      placerOrderNumber: { id: 'PL-1', namespace: 'EHR-ORDERS' },
      accessionNamespace: 'ACME-LAB',
      universalService: { code: '24323-8', display: 'Comprehensive metabolic panel', system: 'LN' },
      collectedAt: '2024-11-07T08:30:00-06:00',
      // OBR-22 as written (the partner's zone): ResultedDateUTC is the same instant in UTC
      reportedAt: '2024-11-07T11:00:00-06:00',
      orderingProvider: { id: '1234', name: { family: 'Smith', given: 'John', middle: 'A', prefix: 'Dr' } },
      orderStatus: 'F',
      specimen: {
        type: { code: '119297000', display: 'Blood specimen', system: 'SCT' },
        collectedAt: '2024-11-07T08:00:00-06:00',
        id: { id: 'SP-77', namespace: 'ACME-LAB' },
      },
      comments: ['Specimen slightly hemolyzed\nsecond line', 'Called to Dr Smith'],
    });
    const results = data.results as Array<Record<string, unknown>>;
    // no comment rows: one result per OBX
    expect(results.map((r) => r.testName)).toEqual(['Potassium', 'Creatinine', 'Titer', 'Bacteria identified', 'Pathology study', 'Annotation']);
    expect(results[0]).toEqual({
      testName: 'Potassium',
      result: '6.90',
      units: 'millimole per liter',
      unitsCode: 'mmol/L',
      referenceRange: '3.5-5.1',
      valueType: 'NM',
      code: '2823-3',
      codeSystem: 'LN',
      alternateCode: { code: 'K', display: 'Potassium serum', system: 'L' },
      abnormalFlags: ['HH', 'A'],
      observationStatus: 'F',
      observedAt: '2024-11-07T08:15:00-06:00',
      performingOrganization: 'ACME Reference Lab',
      // OBX-23 XON-6 `CLIA&2.16.840.1.113883.4.7&ISO`, XON-7 `XX`, XON-10 the CLIA number: kept as sent
      performingOrganizationIdentifier: { id: '05D0000000', namespace: 'CLIA', universalId: '2.16.840.1.113883.4.7', universalIdType: 'ISO', type: 'XX' },
      comments: ['Repeated and confirmed'],
      numericValue: '6.90',
    });
    expect(results[1]).toMatchObject({
      result: '<0.5',
      units: 'mg/dL',
      structuredNumeric: { comparator: '<', value1: '0.5' },
      abnormalFlags: ['L'],
      observationStatus: 'C',
      observedAt: '2024-11-07T08:15-06:00',
    });
    expect(results[1]).not.toHaveProperty('unitsCode');
    expect(results[2]).toMatchObject({ result: '1:128', structuredNumeric: { value1: '1', separator: ':', value2: '128' } });
    expect(results[3]).toMatchObject({
      result: 'Escherichia coli',
      codedValue: { code: '112283007', display: 'Escherichia coli', system: 'SCT' },
      observationStatus: 'P',
      observedAt: '2024-11-07',
    });
    expect(results[4]).toMatchObject({ result: 'Line one\n\nLine three', textLines: ['Line one', '', 'Line three'], observationStatus: 'W' });
    expect(results[5]).toMatchObject({ valueType: 'FT', textLines: ['Formatted text'], observationStatus: 'X' });
    // the body passes the validation of POST /receiveTestData
    expect(() => acceptLabResult(body, NOW)).not.toThrow();
  });

  it('OBX-23/24/25 parts the lab model would refuse (too long) are left out, never a refusal (these fields were not kept before issue 41)', () => {
    const long = 'x'.repeat(250);
    const [body] = bodyOf([
      MSH,
      PID,
      seg('OBR', { 1: '1', 3: 'ACC-3', 4: 'GLU^Glucose^L', 25: 'F' }),
      `OBX|1|NM|GLU^Glucose^L||98|mg/dL|70-99||||F||||||||||||North Lab^^^^^${long}^XX^^^N-1|1 Main St^^${long}^IL|1234^Smith^${long}^^^^^^NPI^^^^NPI`,
    ]);
    expect(() => acceptLabResult(body, NOW)).not.toThrow();
    const [test] = (body!.data as { results: Array<Record<string, unknown>> }).results;
    expect(test).toMatchObject({
      performingOrganization: 'North Lab',
      performingOrganizationIdentifier: { id: 'N-1', type: 'XX' },
      performingOrganizationAddress: { line1: '1 Main St', state: 'IL' },
      performingOrganizationDirector: { identifier: { id: '1234', namespace: 'NPI', type: 'NPI' }, name: { family: 'Smith' } },
    });
    expect(JSON.stringify(test)).not.toContain(long);
  });

  it('an OBX-4 that is not 1-20 printable ASCII characters (a tab, é) is left out, never a refusal; a printable one is kept', () => {
    for (const [subId, kept] of [
      ['1\u00e9', undefined],
      ['a\tb', undefined],
      ['x'.repeat(21), undefined],
      ['1.a', '1.a'],
    ] as const) {
      const [body] = bodyOf([MSH, PID, seg('OBR', { 1: '1', 3: 'ACC-4', 4: 'GLU^Glucose^L', 25: 'F' }), `OBX|1|NM|GLU^Glucose^L|${subId}|98|mg/dL|||||F`]);
      expect(() => acceptLabResult(body, NOW)).not.toThrow();
      expect((body!.data as { results: Array<Record<string, unknown>> }).results[0]!.subId).toBe(kept);
    }
  });

  it('a body without the optional facts keeps the shape of the spec fields (result text as before)', () => {
    const [body] = bodyOf([MSH, PID, seg('OBR', { 1: '1', 3: 'ACC-2', 4: 'GLU^Glucose^L', 25: 'F' }), 'OBX|1|NM|GLU^Glucose^L||98|mg/dL|70-99||||F']);
    expect(body!.data).toEqual({
      senderID: 'ACME-LIS',
      patientID: 'patient-1',
      accessionNumber: 'ACC-2',
      status: 'F',
      ResultedDateUTC: '2024-11-07T09:30:00Z',
      results: [
        {
          testName: 'Glucose',
          result: '98',
          units: 'mg/dL',
          referenceRange: '70-99',
          valueType: 'NM',
          code: 'GLU',
          codeSystem: 'L',
          observationStatus: 'F',
          numericValue: '98',
        },
      ],
      order: { universalService: { code: 'GLU', display: 'Glucose', system: 'L' }, orderStatus: 'F' },
    });
  });

  it('ORC-2 is the placer number when OBR-2 is empty; OBR-15 gives the specimen type of a v2.3 sender; an OBR-4 with only an alternate code keeps it', () => {
    const [body] = bodyOf([
      MSH.replace('2.5.1', '2.3'),
      PID,
      'ORC|RE|ORD-7^EHR',
      seg('OBR', { 1: '1', 3: 'ACC-3', 4: '^^^LOC-1^Local panel^L', 7: '20241107', 15: 'BLD&Blood&HL70070', 25: 'F' }),
      'OBX|1|ST|X^Note^L||text||||||F',
    ]);
    const order = body!.data.order as Record<string, unknown>;
    expect(order.placerOrderNumber).toEqual({ id: 'ORD-7', namespace: 'EHR' });
    expect(order.universalService).toEqual({ code: 'LOC-1', display: 'Local panel', system: 'L' });
    expect(order.specimen).toEqual({ type: { code: 'BLD', display: 'Blood', system: 'HL70070' } });
    expect(order.collectedAt).toBe('2024-11-07');
  });

  it('values that are not what their type says stay in the text only (an NM that is no number, an impossible date)', () => {
    const [body] = bodyOf([
      MSH,
      PID,
      seg('OBR', { 1: '1', 3: 'ACC-4', 4: 'GLU^Glucose^L', 25: 'F' }),
      'OBX|1|NM|GLU^Glucose^L||>400|mg/dL|||||F|||20170229120000',
    ]);
    const [result] = body!.data.results as Array<Record<string, unknown>>;
    expect(result).toMatchObject({ result: '>400', valueType: 'NM' });
    expect(result).not.toHaveProperty('numericValue');
    expect(result).not.toHaveProperty('observedAt');
  });

  it('a flag outside table 0078 or a status outside table 0085 is answered AE at its OBX field', () => {
    const [body] = bodyOf([MSH, PID, seg('OBR', { 1: '1', 3: 'ACC-5', 4: 'GLU^Glucose^L', 25: 'F' }), 'OBX|1|NM|GLU^Glucose^L||98|mg/dL||CRIT|||Q']);
    expect(labResultErrors(body, NOW).map((e) => ('pointer' in e ? e.pointer : ''))).toEqual([
      '/data/results/0/abnormalFlags/0',
      '/data/results/0/observationStatus',
    ]);
    expect(body!.data.results).toEqual([expect.objectContaining({ abnormalFlags: ['CRIT'], observationStatus: 'Q' })]);
  });

  it('the accession number is still required (AE)', () => {
    expect(() => bodyOf([MSH, PID, seg('OBR', { 1: '1', 4: 'GLU^Glucose^L', 25: 'F' }), 'OBX|1|NM|GLU^Glucose^L||98||||||F'])).toThrow(AckRejection);
  });
});

describe('HL7 time stamps in the sender time zone', () => {
  it('a TS without an offset from a partner in America/Chicago lands 6 hours later in UTC in winter, 5 in summer', () => {
    expect(instantFromTs('20240115083000', 'America/Chicago')).toBe('2024-01-15T14:30:00Z');
    expect(instantFromTs('20240715083000', 'America/Chicago')).toBe('2024-07-15T13:30:00Z');
    expect(partialFromTs('20240115083000', 'America/Chicago')).toBe('2024-01-15T08:30:00-06:00');
    expect(partialFromTs('20240715083000', 'America/Chicago')).toBe('2024-07-15T08:30:00-05:00');
  });

  it('with an offset, the offset wins', () => {
    expect(instantFromTs('20240715083000-0400', 'America/Chicago')).toBe('2024-07-15T12:30:00Z');
    expect(partialFromTs('20240715083000+0000', 'America/Chicago')).toBe('2024-07-15T08:30:00Z');
    expect(partialFromTs('202407150830+0530', 'UTC')).toBe('2024-07-15T08:30+05:30');
  });

  it('default UTC; precision kept: year, month, date, minutes, seconds with fraction; an hour is written as minutes', () => {
    expect(instantFromTs('20240715083000')).toBe('2024-07-15T08:30:00Z');
    expect(partialFromTs('2024')).toBe('2024');
    expect(partialFromTs('202407')).toBe('2024-07');
    expect(partialFromTs('20240715', 'America/Chicago')).toBe('2024-07-15');
    expect(partialFromTs('2024071508', 'America/Chicago')).toBe('2024-07-15T08:00-05:00');
    // the lab model keeps the hour (keepHour)
    expect(partialFromTs('2024071508', 'America/Chicago', true)).toBe('2024-07-15T08-05:00');
    expect(partialFromTs('2024071508-0400', 'UTC', true)).toBe('2024-07-15T08-04:00');
    expect(partialFromTs('20240715083000.1234', 'UTC')).toBe('2024-07-15T08:30:00.1234Z');
    expect(instantFromTs('20241107', 'America/Chicago')).toBe('2024-11-07T06:00:00Z');
  });

  it('DST edges: a wall time in the spring gap takes the offset before it; the repeated autumn hour its first occurrence', () => {
    expect(instantFromTs('202403100230', 'America/Chicago')).toBe('2024-03-10T08:30:00Z');
    expect(instantFromTs('202411030130', 'America/Chicago')).toBe('2024-11-03T06:30:00Z');
    expect(instantFromTs('202411030230', 'America/Chicago')).toBe('2024-11-03T08:30:00Z');
  });

  it('refuses what is no time; knows IANA names', () => {
    for (const bad of ['20240230', '2024071525', '202407150830.5', '1899', 'x']) expect(partialFromTs(bad)).toBeUndefined();
    expect(isTimeZone('America/Chicago')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
    expect(isTimeZone('')).toBe(false);
  });

  it('the lab body reads OBR times in the partner zone: ResultedDateUTC stays a UTC instant', () => {
    const segments = [
      MSH,
      PID,
      seg('OBR', { 1: '1', 3: 'ACC-6', 4: 'GLU^Glucose^L', 7: '20240715083000', 22: '20240715093000', 25: 'F' }),
      'OBX|1|NM|GLU^Glucose^L||98||||||F',
    ];
    const [chicago] = bodyOf(segments, 'America/Chicago');
    const [utc] = bodyOf(segments);
    expect(chicago!.data.ResultedDateUTC).toBe('2024-07-15T14:30:00Z');
    expect(utc!.data.ResultedDateUTC).toBe('2024-07-15T09:30:00Z');
    expect((chicago!.data.order as Record<string, unknown>).collectedAt).toBe('2024-07-15T08:30:00-05:00');
    // OBR-22 as written when it says more than its UTC instant: the Chicago offset; in UTC it adds nothing
    expect((chicago!.data.order as Record<string, unknown>).reportedAt).toBe('2024-07-15T09:30:00-05:00');
    expect((utc!.data.order as Record<string, unknown>).reportedAt).toBeUndefined();
  });
});

describe('OBX-3 sent without a display, OBR-22 as written', () => {
  it('`code^^LN` keeps "no display" (testNameFrom code, testName the code for readers); a display, or no code, is a name', () => {
    const [body] = bodyOf([
      MSH,
      PID,
      seg('OBR', { 1: '1', 3: 'ACC-7', 4: 'GLU^Glucose^L', 7: '202411060700-0500', 8: '202411070700-0500', 22: '202411071015-0500', 25: 'F' }),
      'OBX|1|NM|2345-7^^LN||98||||||F',
      'OBX|2|NM|2823-3^Potassium^LN||4.1||||||F',
      'OBX|3|ST|^Comment^||none||||||F',
      'OBX|4|NM|1554-5^^LN^GLU-P^Glucose post^L||182||||||F',
    ]);
    const results = body!.data.results as Array<Record<string, unknown>>;
    expect(results.map((r) => [r.testName, r.code, r.testNameFrom])).toEqual([
      ['2345-7', '2345-7', 'code'],
      ['Potassium', '2823-3', undefined],
      ['Comment', undefined, undefined],
      ['1554-5', '1554-5', 'code'],
    ]);
    expect(body!.data.order).toMatchObject({
      collectedAt: '2024-11-06T07:00-05:00',
      collectedEndAt: '2024-11-07T07:00-05:00',
      reportedAt: '2024-11-07T10:15-05:00',
    });
    expect(body!.data.ResultedDateUTC).toBe('2024-11-07T15:15:00Z');
    expect(labResultErrors(body, NOW)).toEqual([]);
  });

  it('an OBR-8 before OBR-7, without OBR-7, or in the future is left out: the result is still filed (a keying error there never refused a message)', () => {
    const orderFor = (fields: Record<number, string>) => {
      const [body] = bodyOf([
        MSH,
        PID,
        seg('OBR', { 1: '1', 3: 'ACC-8', 4: 'GLU^Glucose^L', 22: '202411071015-0500', 25: 'F', ...fields }),
        'OBX|1|NM|2345-7^^LN||98||||||F',
      ]);
      expect(labResultErrors(body, NOW)).toEqual([]);
      return body!.data.order as Record<string, unknown>;
    };
    expect(orderFor({ 7: '202411070700-0500', 8: '202411060700-0500' }).collectedEndAt).toBeUndefined();
    expect(orderFor({ 8: '202411060700-0500' }).collectedEndAt).toBeUndefined();
    expect(orderFor({ 7: '202411070700-0500', 8: '209911060700-0500' }).collectedEndAt).toBeUndefined();
    expect(orderFor({ 7: '202411060700-0500', 8: '202411070700-0500' }).collectedEndAt).toBe('2024-11-07T07:00-05:00');
  });
});
