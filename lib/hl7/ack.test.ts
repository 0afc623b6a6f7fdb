/**
 * The ACK writer, field by field (issue 27 item 6): layout per sender version, enhanced mode (MSH-15/16),
 * accept codes, batch ACK ids and the BTS-1 count note. The integration side is test/integration/hl7-acks.test.ts.
 */
import { acceptAckCode, ackLayout, ackMode, acknowledge, batchCountNote, encodeBatchAck, type AckError, type AckInput } from './ack';
import { ErrorCodes } from './parse-error';
import { parseHl7, parseHl7Message, valueAt, type ParsedMessage, type ParsedSegment } from './parser';

const header = (version: string, extra = ''): ParsedSegment =>
  parseHl7Message(`MSH|^~\\&|LIS|LAB|APP|FAC|20240101||ORU^R01^ORU_R01|C1|P|${version}${extra}\r`).segments[0]!;

const errors: AckError[] = [
  {
    code: ErrorCodes.tableValueNotFound,
    message: 'OBR-25 result status must be a table 0123 value',
    location: { segmentId: 'OBR', segmentSequence: 2, field: 25 },
  },
  { code: ErrorCodes.requiredFieldMissing, message: 'no location' },
];

const base = (received: ParsedSegment | undefined, code: AckInput['code'] & ('AA' | 'AE' | 'AR'), errs: AckError[] = []) => ({
  received,
  code,
  errors: errs,
  controlId: 'ACK00000000000000001',
  timestamp: new Date('2024-05-06T07:08:09Z'),
  ownApplication: 'INTEROP',
  ownFacility: 'INTEROP',
});

const parse = (text: string): ParsedMessage => parseHl7Message(text);
const seg = (message: ParsedMessage, name: string) => message.segments.filter((s) => s.name === name);

describe('layout per version', () => {
  it.each([
    ['2.2', '2.2', false, false],
    ['2.3', '2.3', false, false],
    ['2.3.1', '2.3.1', true, false],
    ['2.4', '2.4', true, false],
    ['2.5', '2.5', true, true],
    ['2.5.1', '2.5.1', true, true],
    ['2.6', '2.6', true, true],
    ['', '2.5.1', true, true],
    ['banana', '2.5.1', true, true],
  ])('MSH-12 %j -> version %s, MSH-9.3 %s, ERR-2.. %s', (version, expected, structure, modern) => {
    expect(ackLayout(header(version))).toEqual({ version: expected, messageStructure: structure, errorLocationSegment: modern });
  });

  it('2.3: MSH-9 ACK^R01, MSH-12 2.3, MSA-3 and MSA-6 from the first error, one ERR with ERR-1 repeated per error, no ERR-2..', () => {
    const ack = parse(acknowledge(base(header('2.3'), 'AE', errors)).text);
    const msh = ack.segments[0]!;
    expect(msh.fields[9]).toEqual([[['ACK'], ['R01']]]);
    expect(valueAt(msh, 12)).toBe('2.3');
    expect(valueAt(msh, 10)).toBe('ACK00000000000000001');
    expect([valueAt(msh, 3), valueAt(msh, 4), valueAt(msh, 5), valueAt(msh, 6)]).toEqual(['APP', 'FAC', 'LIS', 'LAB']);
    const msa = seg(ack, 'MSA')[0]!;
    expect([valueAt(msa, 1), valueAt(msa, 2), valueAt(msa, 3)]).toEqual(['AE', 'C1', 'OBR-25 result status must be a table 0123 value']);
    expect(msa.fields[6]).toEqual([[['103'], ['Table value not found'], ['HL70357']]]);
    const err = seg(ack, 'ERR');
    expect(err).toHaveLength(1);
    expect(err[0]!.fields).toHaveLength(2); // ERR-1 only
    expect(err[0]!.fields[1]).toEqual([
      [['OBR'], ['2'], ['25'], ['103', 'Table value not found', 'HL70357']],
      [[''], [''], [''], ['101', 'Required field missing', 'HL70357']],
    ]);
  });

  it('2.3: an AA with warnings only (a time left out) names no error condition: MSA-3 and MSA-6 empty, the warning in ERR-1', () => {
    const warning: AckError = {
      code: ErrorCodes.dataType,
      severity: 'W',
      message: 'OBR-22 left out',
      location: { segmentId: 'OBR', segmentSequence: 1, field: 22 },
    };
    const ack = parse(acknowledge(base(header('2.3'), 'AA', [warning])).text);
    const msa = seg(ack, 'MSA')[0]!;
    expect([valueAt(msa, 1), valueAt(msa, 3), valueAt(msa, 6)]).toEqual(['AA', '', '']);
    expect(seg(ack, 'ERR')[0]!.fields[1]).toEqual([[['OBR'], ['1'], ['22'], ['102', 'Data type error', 'HL70357']]]);
  });

  it('2.4: MSH-9 ACK^R01^ACK, MSH-12 2.4, the 2.3 ERR-1 layout', () => {
    const ack = parse(acknowledge(base(header('2.4'), 'AR', [errors[0]!])).text);
    expect(ack.segments[0]!.fields[9]).toEqual([[['ACK'], ['R01'], ['ACK']]]);
    expect(valueAt(ack.segments[0], 12)).toBe('2.4');
    expect(valueAt(seg(ack, 'MSA')[0], 1)).toBe('AR');
    expect(valueAt(seg(ack, 'MSA')[0], 3)).not.toBe('');
    expect(seg(ack, 'ERR')[0]!.fields[1]).toEqual([[['OBR'], ['2'], ['25'], ['103', 'Table value not found', 'HL70357']]]);
  });

  it('2.5.1: one ERR per error with ERR-2 location, ERR-3 code^text^HL70357, ERR-4 E, ERR-8 message; MSA-3 and MSA-6 empty; ERR-1 empty', () => {
    const ack = parse(acknowledge(base(header('2.5.1'), 'AE', errors)).text);
    expect(ack.segments[0]!.fields[9]).toEqual([[['ACK'], ['R01'], ['ACK']]]);
    const msa = seg(ack, 'MSA')[0]!;
    expect(msa.fields.length).toBe(3); // MSA-1, MSA-2 only
    const [first, second] = seg(ack, 'ERR');
    expect(valueAt(first, 1)).toBe('');
    expect(first!.fields[2]).toEqual([[['OBR'], ['2'], ['25']]]);
    expect(first!.fields[3]).toEqual([[['103'], ['Table value not found'], ['HL70357']]]);
    expect(valueAt(first, 4)).toBe('E');
    expect(valueAt(first, 8)).toBe('OBR-25 result status must be a table 0123 value');
    expect(valueAt(second, 2)).toBe('');
    expect(valueAt(second, 3)).toBe('101');
  });

  it('2.3 without a trigger event: MSH-9 ACK; AA: no MSA-3, no ERR', () => {
    const received = parseHl7Message('MSH|^~\\&|LIS|LAB|||20240101||ORU|C9|P|2.3\r').segments[0]!;
    const ack = parse(acknowledge(base(received, 'AA')).text);
    expect(ack.segments[0]!.fields[9]).toEqual([[['ACK']]]);
    expect(seg(ack, 'MSA')[0]!.fields.length).toBe(3);
    expect(seg(ack, 'ERR')).toEqual([]);
  });

  it('no received MSH at all: 2.5.1 layout, own names in MSH-3/4', () => {
    const ack = parse(acknowledge(base(undefined, 'AR', [errors[1]!])).text);
    expect(valueAt(ack.segments[0], 12)).toBe('2.5.1');
    expect(valueAt(ack.segments[0], 3)).toBe('INTEROP');
    expect(ack.segments[0]!.fields[9]).toEqual([[['ACK'], [''], ['ACK']]]);
  });
});

describe('enhanced mode (MSH-15 / MSH-16, table 0155)', () => {
  it('original mode when both are empty; enhanced when either is valued, empty or unknown conditions read as AL', () => {
    expect(ackMode(header('2.5.1'))).toEqual({ enhanced: false, accept: 'NE', application: 'AL' });
    expect(ackMode(header('2.5.1', '|||AL|NE'))).toEqual({ enhanced: true, accept: 'AL', application: 'NE' });
    expect(ackMode(header('2.5.1', '||||ER'))).toEqual({ enhanced: true, accept: 'AL', application: 'ER' });
    expect(ackMode(header('2.5.1', '|||XX|su'))).toEqual({ enhanced: true, accept: 'AL', application: 'SU' });
  });

  it('accept codes: AA -> CA, AE -> CE, AR -> CR, AR for 206/207 -> CE', () => {
    expect(acceptAckCode('AA')).toBe('CA');
    expect(acceptAckCode('AE', [errors[0]!])).toBe('CE');
    expect(acceptAckCode('AR', [{ code: ErrorCodes.unsupportedVersionId, message: 'v' }])).toBe('CR');
    expect(acceptAckCode('AR', [{ code: ErrorCodes.applicationRecordLocked, message: 'l' }])).toBe('CE');
    expect(acceptAckCode('AR', [{ code: ErrorCodes.applicationInternalError, message: 'i' }])).toBe('CE');
  });

  it.each([
    // MSH-15, MSH-16, outcome -> kind, MSA-1
    ['AL', 'AL', 'AA', 'application', 'AA'],
    ['AL', 'AL', 'AE', 'application', 'AE'],
    ['AL', 'NE', 'AA', 'accept', 'CA'],
    ['AL', 'NE', 'AE', 'accept', 'CE'],
    ['AL', 'NE', 'AR', 'accept', 'CR'],
    ['NE', 'ER', 'AA', 'accept', 'CA'],
    ['NE', 'ER', 'AE', 'application', 'AE'],
    ['ER', 'SU', 'AA', 'application', 'AA'],
    ['ER', 'SU', 'AE', 'accept', 'CE'],
    ['NE', 'NE', 'AR', 'accept', 'CR'],
    ['', '', 'AE', 'original', 'AE'],
  ] as const)('MSH-15 %s, MSH-16 %s, outcome %s -> the %s ACK, MSA-1 %s', (accept, application, outcome, kind, msa1) => {
    const received = header('2.5.1', `|||${accept}|${application}`);
    const result = acknowledge(base(received, outcome, outcome === 'AA' ? [] : [errors[0]!]));
    expect(result.kind).toBe(kind);
    expect(result.code).toBe(msa1);
    const ack = parse(result.text);
    expect(valueAt(seg(ack, 'MSA')[0], 1)).toBe(msa1);
    expect(valueAt(seg(ack, 'MSA')[0], 2)).toBe('C1');
    // the outcome's ERR travels with the accept ACK too
    expect(seg(ack, 'ERR').map((e) => valueAt(e, 3))).toEqual(outcome === 'AA' ? [] : ['103']);
  });

  it('an accept ACK to a 2.3 sender uses the 2.3 layout (MSA-3, ERR-1)', () => {
    const ack = parse(acknowledge(base(header('2.3', '|||AL|NE'), 'AE', [errors[0]!])).text);
    expect(valueAt(seg(ack, 'MSA')[0], 1)).toBe('CE');
    expect(valueAt(seg(ack, 'MSA')[0], 3)).not.toBe('');
    expect(valueAt(seg(ack, 'ERR')[0], 1, 4)).toBe('103');
  });
});

describe('batch ACK', () => {
  const parsed = parseHl7(
    'FHS|^~\\&|X|Y|||20240101||||FILE-1\rBHS|^~\\&|X|Y|||20240101||||BATCH-1\rMSH|^~\\&|X|Y|||20240101||ORU^R01|Z|P|2.5.1\rBTS|1\rFTS|1\r',
  );
  if (parsed.kind !== 'batch') throw new Error('expected a batch');
  const input = (count?: string) => ({
    receivedBatchHeader: parsed.batch.batchHeader,
    receivedFileHeader: parsed.batch.fileHeader,
    controlId: 'BATCHACK000000000001',
    fileControlId: 'FILEACK0000000000001',
    timestamp: new Date('2024-05-06T07:08:09Z'),
    ownApplication: 'INTEROP',
    ownFacility: 'INTEROP',
    acks: ['MSH|^~\\&|A\rMSA|AA|1\r', 'MSH|^~\\&|A\rMSA|AA|2\r'],
    receivedMessageCount: count,
  });
  const lines = (text: string) => text.split('\r').filter(Boolean);

  it('FHS-11 and BHS-11 are the two distinct ids; FHS-12 / BHS-12 the received ids; BTS-1 the ACK count', () => {
    const out = lines(encodeBatchAck(input('2')));
    expect(out[0]!.split('|')[10]).toBe('FILEACK0000000000001');
    expect(out[1]!.split('|')[10]).toBe('BATCHACK000000000001');
    expect(out[0]!.split('|')[11]).toBe('FILE-1');
    expect(out[1]!.split('|')[11]).toBe('BATCH-1');
    expect(out).toContain('BTS|2');
    expect(out[out.length - 1]).toBe('FTS|1');
  });

  it.each([
    ['3', 'BTS-1 says 3 messages, the batch held 2'],
    ['1', 'BTS-1 says 1 messages, the batch held 2'],
    ['two', 'BTS-1 is not a message count, the batch held 2'],
  ])('received BTS-1 %s with 2 messages -> BTS-2 says so', (count, start) => {
    const bts = lines(encodeBatchAck(input(count))).find((l) => l.startsWith('BTS'))!;
    expect(bts.split('|')[1]).toBe('2');
    expect(bts.split('|')[2]).toContain(start);
    expect(bts).not.toContain('two');
  });

  it('no BTS-1 or a matching one: no note', () => {
    expect(batchCountNote(undefined, 2)).toBeUndefined();
    expect(batchCountNote('', 2)).toBeUndefined();
    expect(batchCountNote('02', 2)).toBeUndefined();
    expect(lines(encodeBatchAck(input(undefined)))).toContain('BTS|2');
  });
});
