/**
 * Issue 27: every HL7 export of a lab result (the single-result ORU^R01, the patient summary in both
 * styles) writes the lab model in its v2.5.1 places. Read back with lib/hl7/parser.ts, field by field,
 * and checked by the independent structure validator and the receiver rules.
 */
import type { LabResultSummary } from '../../lib/chart/types';
import { encodeLabResultMessage, encodePatientSummary } from '../../lib/hl7';
import { type ParsedMessage, type ParsedSegment, parseHl7, parseHl7Message, repetitionsOf, valueAt } from '../../lib/hl7/parser';
import { header, labResult, patient } from './chart-fixtures';
import { fullLabResult } from './lab-model-export.fixtures';
import { validateExport } from './receiver-rules';

function segments(message: ParsedMessage, name: string): ParsedSegment[] {
  return message.segments.filter((segment) => segment.name === name);
}

function singleResult(result: LabResultSummary): { text: string; message: ParsedMessage } {
  const text = encodeLabResultMessage({ header, result, patient });
  return { text, message: parseHl7Message(text) };
}

/** The lab messages of a summary: the ORU of the `oru` style, the lab ORU of the `batch` style. */
function summaryLabMessage(result: LabResultSummary, style: 'oru' | 'batch'): { text: string; message: ParsedMessage } {
  const summary = encodePatientSummary({ header, patient, records: [], labResults: [result], style });
  expect(validateExport(summary.text).issues).toEqual([]);
  const parsed = parseHl7(summary.text);
  if (parsed.kind === 'message') return { text: summary.text, message: parsed.message };
  const messages = parsed.batch.messages.flatMap((entry) => (entry.ok ? [entry.message] : []));
  const lab = messages.find((message) => message.segments.some((segment) => segment.name === 'OBR'));
  return { text: summary.text, message: lab! };
}

const labExports: Array<[string, (result: LabResultSummary) => { text: string; message: ParsedMessage }]> = [
  ['GET /exportHl7LabResult', singleResult],
  ['the summary, oru style', (result) => summaryLabMessage(result, 'oru')],
  ['the summary, batch style', (result) => summaryLabMessage(result, 'batch')],
];

describe.each(labExports)('%s: the lab model in its v2.5.1 places', (_name, encode) => {
  const { text, message } = encode(fullLabResult);

  test('valid v2.5.1 (structure, fields, tables) and passing the receiver rules', () => {
    expect(validateExport(text).issues).toEqual([]);
  });

  test('segment order: OBR, order NTE, OBX each with its NTE, SPM after the observations', () => {
    const names = message.segments.map((segment) => segment.name).filter((name) => ['OBR', 'NTE', 'OBX', 'SPM'].includes(name));
    expect(names).toEqual(['OBR', 'NTE', 'OBX', 'NTE', 'NTE', 'OBX', 'OBX', 'OBX', 'OBX', 'OBX', 'OBX', 'NTE', 'SPM']);
  });

  test('OBR: placer and accession with the sender namespaces, coded service, collection and resulted times, provider, status', () => {
    const obr = segments(message, 'OBR')[0];
    expect(valueAt(obr, 2, 1)).toBe('ORD-7781');
    expect(valueAt(obr, 2, 2)).toBe('CLINIC_EHR');
    expect(valueAt(obr, 3, 1)).toBe('A24-1107-0042');
    expect(valueAt(obr, 3, 2)).toBe('ACME_LIS');
    expect([valueAt(obr, 4, 1), valueAt(obr, 4, 2), valueAt(obr, 4, 3)]).toEqual(['24323-8', 'Comprehensive metabolic panel', 'LN']);
    // OBR-7 the collection time as the lab wrote it (minutes, its offset); OBR-22 the resulted time
    expect(valueAt(obr, 7)).toBe('202411070830-0600');
    expect(valueAt(obr, 22)).toBe('20241107160500+0000');
    expect([valueAt(obr, 16, 1), valueAt(obr, 16, 2), valueAt(obr, 16, 3)]).toEqual(['1234567890', 'Okafor', 'Ada']);
    // the lab's clinician id: assigned in the sender's context, not the chart's clinician namespace
    expect(valueAt(obr, 16, 9)).toBe('acme-lab');
    expect(valueAt(obr, 25)).toBe('F');
  });

  test('NTE: the order comment after the OBR, each result comment after its OBX', () => {
    const notes = segments(message, 'NTE').map((nte) => [valueAt(nte, 1), valueAt(nte, 2), valueAt(nte, 3)]);
    expect(notes).toEqual([
      ['1', 'L', 'Patient fasting 12 hours.'],
      ['1', 'L', 'Critical value called to Dr Okafor at 10:02.'],
      ['2', 'L', 'Repeat on new draw advised.'],
      ['1', 'L', 'Specimen hemolyzed; test cannot be performed.'],
    ]);
  });

  test('OBX NM: value as written, code + alternate, UCUM units, range, flags as repetitions, status, time, performer', () => {
    const obx = segments(message, 'OBX')[0];
    expect(valueAt(obx, 2)).toBe('NM');
    expect([1, 2, 3, 4, 5, 6].map((c) => valueAt(obx, 3, c))).toEqual(['2823-3', 'Potassium', 'LN', 'K', 'Potassium', '99ACM']);
    expect(valueAt(obx, 5)).toBe('6.90');
    expect([valueAt(obx, 6, 1), valueAt(obx, 6, 2), valueAt(obx, 6, 3)]).toEqual(['mmol/L', 'mmol/L', 'UCUM']);
    expect(valueAt(obx, 7)).toBe('3.5-5.1');
    expect(repetitionsOf(obx, 8).map((rep) => rep[0]![0])).toEqual(['HH', 'A']);
    expect(valueAt(obx, 11)).toBe('F');
    expect(valueAt(obx, 14)).toBe('202411070910-0600');
    expect(valueAt(obx, 23)).toBe('Acme Reference Laboratory');
  });

  test('OBX SN: comparator, range and ratio as comparator^value1^separator^value2; C and W statuses kept; a date stays a date', () => {
    const [, troponin, glucose, ana] = segments(message, 'OBX');
    expect(valueAt(troponin, 2)).toBe('SN');
    expect([1, 2].map((c) => valueAt(troponin, 5, c))).toEqual(['<', '0.01']);
    expect(valueAt(troponin, 11)).toBe('C');
    expect(valueAt(troponin, 14)).toBe('20241107');
    expect([1, 2, 3, 4].map((c) => valueAt(glucose, 5, c))).toEqual(['', '10', '-', '20']);
    expect(valueAt(glucose, 11)).toBe('W');
    expect([valueAt(glucose, 6, 1), valueAt(glucose, 6, 2), valueAt(glucose, 6, 3)]).toEqual(['mg/dL', 'mg/dL', 'UCUM']);
    // without a performing organization: the sender
    expect(valueAt(glucose, 23)).toBe('acme-lab');
    // without its own observation time: the specimen's collection time (OBR-7), as FHIR effective[x] has it, not the resulted time
    expect(valueAt(glucose, 14)).toBe('202411070830-0600');
    expect([1, 2, 3, 4].map((c) => valueAt(ana, 5, c))).toEqual(['', '1', ':', '160']);
    expect(repetitionsOf(ana, 8).map((rep) => rep[0]![0])).toEqual(['A']);
  });

  test('OBX CE (coded), TX lines as repetitions, X without a value', () => {
    const [, , , , coded, text, cancelled] = segments(message, 'OBX');
    expect(valueAt(coded, 2)).toBe('CE');
    expect([1, 2, 3].map((c) => valueAt(coded, 5, c))).toEqual(['260385009', 'Negative', 'SCT']);
    expect(valueAt(text, 2)).toBe('TX');
    expect(repetitionsOf(text, 5).map((rep) => rep[0]![0])).toEqual(['Line one', 'Line two']);
    expect(valueAt(cancelled, 11)).toBe('X');
    expect(repetitionsOf(cancelled, 5)).toEqual([]);
  });

  test('SPM: specimen id, type and collection time', () => {
    const spm = segments(message, 'SPM')[0];
    expect(valueAt(spm, 1)).toBe('1');
    expect([valueAt(spm, 2, 2, 1), valueAt(spm, 2, 2, 2)]).toEqual(['SPC-99812', 'ACME_LIS']);
    expect([1, 2, 3].map((c) => valueAt(spm, 4, c))).toEqual(['119364003', 'Serum specimen', 'SCT']);
    expect(valueAt(spm, 17)).toBe('202411070830-0600');
  });
});

describe('records without the new fields export as before', () => {
  test('OBR-4 LAB, OBR-7 = OBR-22 = resulted at, comment rows as NTE after the OBR, no OBX-8, no SPM', () => {
    const { text, message } = singleResult(labResult);
    expect(validateExport(text).issues).toEqual([]);
    const obr = segments(message, 'OBR')[0];
    expect(valueAt(obr, 3, 2)).toBe(header.sendingFacility);
    expect([valueAt(obr, 4, 1), valueAt(obr, 4, 3)]).toEqual(['LAB', 'L']);
    expect(valueAt(obr, 7)).toBe('20240501164500+0000');
    expect(valueAt(obr, 22)).toBe('20240501164500+0000');
    expect(segments(message, 'NTE').map((nte) => valueAt(nte, 3))).toEqual(['Comment: Specimen slightly hemolyzed']);
    expect(segments(message, 'SPM')).toEqual([]);
    for (const obx of segments(message, 'OBX')) {
      expect(repetitionsOf(obx, 8)).toEqual([]);
      expect(valueAt(obx, 6, 3)).toBe('');
    }
  });

  test('a specimen without a type writes no SPM (SPM-4 is required); its collection time is OBR-7', () => {
    const { text, message } = singleResult({ ...labResult, order: { specimen: { collectedAt: '2024-04-30' } } });
    expect(validateExport(text).issues).toEqual([]);
    expect(segments(message, 'SPM')).toEqual([]);
    expect(valueAt(segments(message, 'OBR')[0], 7)).toBe('20240430');
  });
});

test('reports of the single-result export are OBSERVATION OBX before the SPECIMEN group', () => {
  const text = encodeLabResultMessage({
    header,
    result: fullLabResult,
    patient,
    reports: [{ name: 'Full report', type: 'text/plain', source: 'text', data: 'All values above.' }],
  });
  expect(validateExport(text).issues).toEqual([]);
  const names = parseHl7Message(text).segments.map((segment) => segment.name);
  expect(names.slice(-3)).toEqual(['NTE', 'OBX', 'SPM']);
  const report = segments(parseHl7Message(text), 'OBX').at(-1);
  expect([valueAt(report, 1), valueAt(report, 3, 1)]).toEqual(['8', 'REPORT']);
});

describe('issue 27 K3 / K5 / K6 in the summary (both styles)', () => {
  const longName = 'Regional Public Health Laboratory of the Northern Counties, Newborn Screening Section';
  const result: LabResultSummary = {
    ...fullLabResult,
    results: [
      { testName: 'Accession Number', result: 'A-1', valueType: 'ST', alternateCode: { code: '99717-5', display: 'Accession Number', system: 'L' } },
      { testName: 'Sodium', result: '140', code: '2951-2', codeSystem: 'LN', performingOrganization: longName },
    ],
    documents: [
      { name: 'Short report', type: 'application/pdf', source: 'base64', bytes: 3, data: 'QUJD' },
      { name: 'Full report', type: 'application/pdf', source: 'base64', bytes: 40_000 },
    ],
  };
  test.each(['oru', 'batch'] as const)('%s: OBX-3 as sent, OBX-23 whole, documents ED whole or RP to the single-result export (valid v2.5.1)', (style) => {
    const { text, message } = summaryLabMessage(result, style);
    expect(validateExport(text).issues).toEqual([]);
    const obx = segments(message, 'OBX');
    expect(obx.map((s) => valueAt(s, 2))).toEqual(['ST', 'NM', 'ED', 'RP']);
    expect(obx[0]!.fields[3]![0]!.map((c) => c.join('&')).join('^')).toBe('^^^99717-5^Accession Number^L');
    expect(valueAt(obx[1], 23, 1)).toBe(longName);
    expect([valueAt(obx[2], 3, 1), valueAt(obx[2], 3, 2), valueAt(obx[2], 4), valueAt(obx[2], 5, 2), valueAt(obx[2], 5, 3), valueAt(obx[2], 5, 5)]).toEqual([
      'REPORT',
      'Short report',
      '1',
      'AP',
      'PDF',
      'QUJD',
    ]);
    expect([valueAt(obx[3], 3, 2), valueAt(obx[3], 4), valueAt(obx[3], 5, 1), valueAt(obx[3], 5, 3), valueAt(obx[3], 5, 4)]).toEqual([
      'Full report',
      '2',
      `/exportHl7LabResult?resultId=${fullLabResult.resultId}`,
      'AP',
      'PDF',
    ]);
  });
});
