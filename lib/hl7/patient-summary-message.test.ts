import { assessment, encounter, header, labResult, note, patient, records } from '../../test/hl7/chart-fixtures';
import { validateExport } from '../../test/hl7/receiver-rules';
import { type LabResultSummary } from './observations';
import { DEFAULT_SUMMARY_MAX_BYTES, encodePatientSummary, jsonStringBytes } from './patient-summary-message';

/** 70 lab results, newest first, each with one value of 32,000 `|` (escaped to `\F\`: 96,000 characters). */
function longLabResults(count = 70): LabResultSummary[] {
  return Array.from({ length: count }, (_, index) => ({
    ...labResult,
    resultId: `res-${index}`,
    accessionNumber: `ACC-${String(index).padStart(3, '0')}`,
    resultedAt: new Date(Date.UTC(2024, 4, 1) - index * 3_600_000).toISOString(),
    results: [{ testName: 'Free text report', result: '|'.repeat(32_000) }],
  }));
}

function obrFields(text: string, field: number): string[] {
  return text
    .split('\r')
    .filter((segment) => segment.startsWith('OBR|'))
    .map((segment) => segment.split('|')[field] ?? '');
}

describe('jsonStringBytes', () => {
  test('counts what JSON.stringify makes of the text, in UTF-8 bytes', () => {
    for (const text of ['', 'plain', 'a\rb\\F\\c"d', 'Zoë 中文 😀', '\u0001\t\n']) {
      expect(jsonStringBytes(text)).toBe(Buffer.byteLength(JSON.stringify(text), 'utf8'));
    }
  });
});

describe.each(['batch', 'oru'] as const)('the patient summary, style %s', (style) => {
  test('valid and passing the receiver rules; nothing cut', () => {
    const summary = encodePatientSummary({ header, patient, records, labResults: [labResult], style });
    expect(validateExport(summary.text).issues).toEqual([]);
    expect(summary).toMatchObject({ style, cut: false, recordsAvailable: 4, recordsIncluded: 4 });
    expect(summary.text.startsWith(style === 'batch' ? 'FHS|' : 'MSH|')).toBe(true);
  });

  test('70 results with long values stay within the 5,000,000-byte budget: newest first, cut said in the HL7', () => {
    const labResults = longLabResults();
    const summary = encodePatientSummary({ header, patient, records: [], labResults, style });
    // without the budget the same summary is far above Lambda's 6 MB (6,291,456 bytes) response limit
    const unbounded = encodePatientSummary({ header, patient, records: [], labResults, style, maxBytes: Number.MAX_SAFE_INTEGER });
    expect(unbounded.cut).toBe(false);
    expect(Buffer.byteLength(JSON.stringify(unbounded.text), 'utf8')).toBeGreaterThan(6_291_456);

    expect(summary.cut).toBe(true);
    expect(summary.recordsAvailable).toBe(70);
    expect(summary.recordsIncluded).toBeGreaterThan(0);
    expect(summary.recordsIncluded).toBeLessThan(70);
    expect(Buffer.byteLength(JSON.stringify(summary.text), 'utf8')).toBe(summary.wireBytes);
    expect(summary.wireBytes).toBeLessThanOrEqual(DEFAULT_SUMMARY_MAX_BYTES);
    // the newest results, in order, then the cut notice
    const accessions = obrFields(summary.text, 3).map((value) => value.split('^')[0]);
    expect(accessions).toEqual([...labResults.slice(0, summary.recordsIncluded).map((lab) => lab.accessionNumber), '']);
    expect(obrFields(summary.text, 4).at(-1)).toBe('SUMMARY_CUT^Summary cut at its size budget^L');
    expect(summary.text).toContain(`NTE|1|L|This summary holds the ${summary.recordsIncluded} newest of 70 records`);
    // long text is TX (ST holds at most 199 characters)
    expect(summary.text).toContain('|TX|FREE-TEXT-REPORT^Free text report^L|');
    expect(validateExport(summary.text).issues).toEqual([]);
  });

  test('a budget too small for any record still gives a valid summary that says so', () => {
    const summary = encodePatientSummary({ header, patient, records, labResults: [labResult], style, maxBytes: 100 });
    expect(summary).toMatchObject({ cut: true, recordsIncluded: 0, recordsAvailable: 4 });
    expect(validateExport(summary.text).issues).toEqual([]);
  });
});

describe('batch style', () => {
  test('one typed message per record: ADT demographics, ORU lab, MDM note, ORU assessment, ADT encounter, ORU per order', () => {
    const summary = encodePatientSummary({ header, patient, records, labResults: [labResult] });
    expect(validateExport(summary.text).structures).toEqual(['ADT_A01', 'ORU_R01', 'MDM_T02', 'ORU_R01', 'ADT_A01', 'ORU_R01', 'ORU_R01']);
    const types = summary.text
      .split('\r')
      .filter((segment) => segment.startsWith('MSH|'))
      .map((segment) => segment.split('|')[8]);
    expect(types).toEqual([
      'ADT^A08^ADT_A01',
      'ORU^R01^ORU_R01',
      'MDM^T02^MDM_T02',
      'ORU^R01^ORU_R01',
      'ADT^A08^ADT_A01',
      'ORU^R01^ORU_R01',
      'ORU^R01^ORU_R01',
    ]);
  });

  test('the note has the same document number in the batch (TXA-12) as in the one-ORU summary (OBR-3)', () => {
    const batch = encodePatientSummary({ header, patient, records, style: 'batch' }).text;
    const oru = encodePatientSummary({ header, patient, records, style: 'oru' }).text;
    const txa12 = batch
      .split('\r')
      .find((segment) => segment.startsWith('TXA|'))!
      .split('|')[12];
    const noteObr = oru.split('\r').find((segment) => segment.startsWith('OBR|') && segment.includes('NOTE^ChartNote^L'))!;
    expect(noteObr.split('|')[3]).toBe(txa12);
    expect(txa12).toBe(`${note.noteId}^${header.sendingFacility}`);
  });

  test('a note whose encounter is among the records carries PV1-19 of that encounter', () => {
    const batch = encodePatientSummary({ header, patient, records }).text;
    const mdm = batch.split('MSH|').find((message) => message.includes('MDM^T02'))!;
    const pv1 = mdm.split('\r').find((segment) => segment.startsWith('PV1|'))!;
    expect(pv1.split('|')[19]).toBe(`${encounter.encounterId}^^^${header.sendingFacility}^VN`);
    expect(assessment.encounterId).toBe(encounter.encounterId);
  });
});
