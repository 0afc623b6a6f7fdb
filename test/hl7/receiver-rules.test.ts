/**
 * The receiver rules (receiver-rules.ts): every reviewed fixture passes them; the exports as they were
 * before issue 13 (fixtures/before-issue-13/, the output of the encoder at that time) fail them for each
 * reason the issue lists; hand-written breakages are caught one by one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FIXTURE_NAMES, loadFixture } from './fixtures';
import { receiverRuleIssues, validateExport } from './receiver-rules';

function before(name: string): string {
  return readFileSync(join(__dirname, 'fixtures', 'before-issue-13', `${name}.hl7`), 'utf8').replace(/\n/g, '\r');
}

function messages(text: string): string[] {
  return receiverRuleIssues(text).map((issue) => issue.message);
}

describe('receiver rules', () => {
  test.each(FIXTURE_NAMES)('the reviewed fixture %s passes the structure validator and the receiver rules', (name) => {
    expect(validateExport(loadFixture(name)).issues).toEqual([]);
  });

  test('the note as exported before issue 13 fails: no offsets, \\.br\\ in TX, no MSH-15/16, no name type', () => {
    const found = messages(before('mdm-t02-note'));
    expect(found).toEqual(
      expect.arrayContaining([
        'time stamp 20240506140809 has no offset',
        'formatting command in TX (a TX line break is a repetition)',
        'MSH-15 and MSH-16 (acknowledgment types) must be valued',
        'PID-5 without name type L',
        'OBX-3 must be coded (identifier and coding system)',
        'XCN-1 without its assigning authority (XCN-9)',
        'EI-1 without its namespace (EI-2)',
      ]),
    );
  });

  test('the encounter as exported before issue 13 fails: ORC-1 RE without OBX, OBR without OBR-7/OBR-25, I10', () => {
    const found = messages(before('oru-r01-encounter'));
    expect(found).toEqual(
      expect.arrayContaining([
        'ORC-1 RE (observations follow) without any OBX',
        'OBR-7 (observation time) is required in a result message',
        'OBR-25 (result status) is required in a result message',
        'I10 is WHO ICD-10; ICD-10-CM is I10C',
      ]),
    );
  });

  test('the summary as exported before issue 13 fails: lab OBR without OBR-7, OBX-3 text only, address and phone', () => {
    const found = messages(before('oru-r01-summary'));
    expect(found).toEqual(
      expect.arrayContaining([
        'OBR-7 (observation time) is required in a result message',
        'OBX-3 must be coded (identifier and coding system)',
        'PID-11 without address type',
        'North American number without XTN-6/XTN-7',
      ]),
    );
    expect(messages(before('oru-r01-summary-empty'))).toEqual(expect.arrayContaining(['OBR-25 (result status) is required in a result message']));
  });

  const header = 'MSH|^~\\&|A|B|C|D|20240101000000+0000||ORU^R01^ORU_R01|1|P|2.5.1|||NE|NE\rPID|1||X^^^Y^MR||Doe^^^^^^L\r';

  /** An OBR with OBR-4, OBR-7 and OBR-25 and the given fields. */
  function obr(fields: Record<number, string>): string {
    const values: string[] = Array.from({ length: 26 }, (_, index) => (index === 0 ? 'OBR' : index === 1 ? '1' : ''));
    values[4] = 'C^T^L';
    values[7] = '20240101000000+0000';
    values[25] = 'F';
    for (const [index, value] of Object.entries(fields)) values[Number(index)] = value;
    return values.join('|');
  }

  test('lengths: CX-1 and XCN-1 over 15, EI-1 over 22, TXA-12 over 30', () => {
    const longIds =
      header.replace('X^^^Y^MR', 'X234567890123456^^^Y^MR') + `${obr({ 2: '12345678901234567890123^NS', 16: 'ABCDEFGHIJKLMNOP^Doe^^^^^^^NS' })}\r`;
    expect(messages(longIds)).toEqual(
      expect.arrayContaining(['CX-1 "X234567890123456" is longer than 15', 'OBR-2 is longer than 22', 'XCN-1 "ABCDEFGHIJKLMNOP" is longer than 15']),
    );
  });

  test('an ST value over 199 characters in OBX-5', () => {
    const message = `${header}OBR|1|||C^T^L|||20240101000000+0000||||||||||||||||||F\rOBX|1|ST|C^T^L||${'x'.repeat(200)}||||||F\r`;
    expect(messages(message)).toEqual(['ST value of 200 characters (at most 199; longer text goes as TX)']);
  });

  test('the date of birth (a calendar date) needs no offset; a time does', () => {
    const message = `${header.replace('Doe^^^^^^L', 'Doe^^^^^^L||19840719')}OBR|1|||C^T^L|||202401010000||||||||||||||||||F\r`;
    expect(messages(message)).toEqual(['time stamp 202401010000 has no offset']);
  });

  test('batches: BTS-1 must count the messages, MSH-10 must not repeat', () => {
    const batch = loadFixture('batch-summary');
    expect(validateExport(batch).valid).toBe(true);
    const wrongCount = batch.replace(/BTS\|\d+/, 'BTS|3');
    expect(validateExport(wrongCount).issues.map((issue) => issue.location)).toContain('BTS-1');
    const controlIds = [...batch.matchAll(/\rMSH\|(?:[^|]*\|){8}([^|]*)\|/g)].map((match) => match[1]!);
    const repeated = batch.split(controlIds[1]!).join(controlIds[0]!);
    expect(validateExport(repeated).issues.map((issue) => issue.message)).toEqual(expect.arrayContaining([`MSH-10 ${controlIds[0]} repeats within the batch`]));
  });
});
