/**
 * ACKs of POST /receiveHl7 against the local stack (issue 27 item 6, docs/hl7-intake.md "Acknowledgements"):
 * the layout per sender version (2.3, 2.4, 2.5.1), enhanced mode (MSH-15/16), every ERR path the
 * intake reports, table 0123 values, batch ACKs. Each ACK is parsed and read field by field.
 */
import { firstSegment, parseHl7Message, valueAt, type ParsedMessage, type ParsedSegment } from '../../lib/hl7/parser';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack, type HttpResult } from '../support/local-stack';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36).toUpperCase()}${++seq}`;

async function post(body: string): Promise<HttpResult> {
  return call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': 'demo-hl7-key', 'content-type': 'application/hl7-v2' }, body });
}

async function ackOf(body: string): Promise<ParsedMessage> {
  const res = await post(body);
  expect(res.status).toBe(200);
  return parseHl7Message(res.text);
}

const msaOf = (ack: ParsedMessage) => firstSegment(ack, 'MSA')!;
const errsOf = (ack: ParsedMessage) => ack.segments.filter((s) => s.name === 'ERR');

interface OruOptions {
  version?: string;
  type?: string;
  status?: string;
  processing?: string;
  sender?: string;
  ackTypes?: string;
  accession?: string | null;
  obx?: string;
}

function oru(controlId: string, options: OruOptions = {}): string {
  const version = options.version ?? '2.5.1';
  const type = options.type ?? (version === '2.3' ? 'ORU^R01' : 'ORU^R01^ORU_R01');
  const accession = options.accession === null ? '' : (options.accession ?? unique('ACC'));
  const tail = options.ackTypes ? `|||${options.ackTypes}` : '';
  return (
    [
      `MSH|^~\\&|LIS|${options.sender ?? 'DEMO-LAB-LIS'}|INTEROP|DEMO-HOSP|20240301093000+0000||${type}|${controlId}|${options.processing ?? 'P'}|${version}${tail}`,
      'PID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex',
      `OBR|1||${accession}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||${options.status ?? 'F'}`,
      options.obx ?? 'OBX|1|NM|2345-7^Glucose^LN||98|mg/dL^^UCUM|70-99|N|||F',
    ].join('\r') + '\r'
  );
}

/** The MSH fields every ACK carries, for the sender's version and the received control id. */
function expectHeader(ack: ParsedMessage, version: string, controlId: string, trigger = 'R01'): void {
  const msh = ack.segments[0]!;
  expect(valueAt(msh, 3)).toBe('INTEROP');
  expect(valueAt(msh, 4)).toBe('DEMO-HOSP');
  expect(valueAt(msh, 5)).toBe('LIS');
  expect(valueAt(msh, 6)).toBe('DEMO-LAB-LIS');
  expect(valueAt(msh, 10)).toMatch(/^[0-9A-F]{20}$/);
  expect(valueAt(msh, 10)).not.toBe(controlId);
  expect(valueAt(msh, 12)).toBe(version);
  expect(msh.fields[9]).toEqual([version === '2.3' ? [['ACK'], [trigger]] : [['ACK'], [trigger], ['ACK']]]);
  expect(valueAt(msaOf(ack), 2)).toBe(controlId);
}

/** ERR as the version lays it out: [segment, sequence, field, code] from ERR-1 (2.3/2.4) or ERR-2/ERR-3 (2.5+). */
function errorsAsRead(ack: ParsedMessage, version: string): Array<[string, string, string, string]> {
  const legacy = version === '2.3' || version === '2.4';
  if (legacy) {
    const err = errsOf(ack);
    expect(err.length).toBeLessThanOrEqual(1); // the 2.3/2.4 ACK holds at most one ERR
    return (err[0]?.fields[1] ?? []).map((rep) => [rep[0]?.[0] ?? '', rep[1]?.[0] ?? '', rep[2]?.[0] ?? '', rep[3]?.[0] ?? '']);
  }
  return errsOf(ack).map((err: ParsedSegment) => {
    expect(valueAt(err, 1)).toBe('');
    expect(valueAt(err, 3, 3)).toBe('HL70357');
    expect(valueAt(err, 4)).toBe('E');
    expect(valueAt(err, 8)).not.toBe('');
    return [valueAt(err, 2, 1), valueAt(err, 2, 2), valueAt(err, 2, 3), valueAt(err, 3, 1)];
  });
}

describe.each(['2.3', '2.4', '2.5.1'])('a v%s sender', (version) => {
  const legacy = version !== '2.5.1';

  it('AA: MSH-9 and MSH-12 for the version, MSA-2 the control id, no MSA-3, no ERR', async () => {
    const controlId = unique('VA');
    const ack = await ackOf(oru(controlId, { version }));
    expectHeader(ack, version, controlId);
    expect(valueAt(msaOf(ack), 1)).toBe('AA');
    expect(valueAt(msaOf(ack), 3)).toBe('');
    expect(errsOf(ack)).toEqual([]);
  });

  it(`a content error (OBR-25 not in table 0123): AE 103 at OBR^1^25, ${legacy ? 'ERR-1 and MSA-3/MSA-6' : 'ERR-2/3/4/8, MSA-3 empty'}`, async () => {
    const controlId = unique('VE');
    const ack = await ackOf(oru(controlId, { version, status: 'Q' }));
    expectHeader(ack, version, controlId);
    expect(valueAt(msaOf(ack), 1)).toBe('AE');
    expect(errorsAsRead(ack, version)).toEqual([['OBR', '1', '25', '103']]);
    if (legacy) {
      expect(valueAt(msaOf(ack), 3)).toMatch(/OBR-25/);
      expect(valueAt(msaOf(ack), 3).length).toBeLessThanOrEqual(80);
      expect(msaOf(ack).fields[6]).toEqual([[['103'], ['Table value not found'], ['HL70357']]]);
      expect(errsOf(ack)[0]!.fields).toHaveLength(2); // no ERR-2..ERR-8 before 2.5
      expect(valueAt(errsOf(ack)[0], 1, 4, 3)).toBe('HL70357');
    } else {
      expect(msaOf(ack).fields.length).toBe(3);
    }
  });

  it('a header rejection (processing id X): AR 202 at MSH^1^11 in the version layout', async () => {
    const controlId = unique('VR');
    const ack = await ackOf(oru(controlId, { version, processing: 'X' }));
    expectHeader(ack, version, controlId);
    expect(valueAt(msaOf(ack), 1)).toBe('AR');
    expect(errorsAsRead(ack, version)).toEqual([['MSH', '1', '11', '202']]);
  });
});

describe('every ERR path (v2.5.1): MSA-1, ERR-3, ERR-2', () => {
  const observation = 'OBX|1|NM|2345-7^Glucose^LN||98|mg/dL^^UCUM|70-99|N|||F';
  it.each<[string, (id: string) => string, string, [string, string, string, string]]>([
    ['100 an ORU without OBX -> AE', (id) => oru(id, { obx: 'NTE|1||no observation' }), 'AE', ['OBR', '', '', '100']],
    ['100 a segment without a valid id (the message structure is unreadable) -> AR', (id) => oru(id) + 'OB\r', 'AR', ['MSH', '1', '', '100']],
    ['101 no accession (OBR-3 / OBR-2) -> AE', (id) => oru(id, { accession: null }), 'AE', ['OBR', '1', '3', '101']],
    ['102 a bad escape in OBX-5 (content) -> AE', (id) => oru(id, { obx: observation.replace('|98|', '|9\\Q\\8|') }), 'AE', ['OBX', '1', '5', '102']],
    ['102 broken encoding characters (MSH-2) -> AR', (id) => oru(id).replace('MSH|^~\\&|', 'MSH|^^\\&|'), 'AR', ['MSH', '1', '2', '102']],
    ['103 OBR-25 Y (no order on record: no result) -> AE', (id) => oru(id, { status: 'Y' }), 'AE', ['OBR', '1', '25', '103']],
    ['103 OBR-25 Z (no patient on record: no result) -> AE', (id) => oru(id, { status: 'Z' }), 'AE', ['OBR', '1', '25', '103']],
    ['200 an unsupported message type -> AR', (id) => oru(id, { type: 'DFT^P03' }), 'AR', ['MSH', '1', '9', '200']],
    ['201 an unsupported trigger event of a supported type (ADT^A99) -> AR', (id) => oru(id, { type: 'ADT^A99^ADT_A01' }), 'AR', ['MSH', '1', '9', '201']],
    ['201 ORU without a trigger event -> AR', (id) => oru(id, { type: 'ORU' }), 'AR', ['MSH', '1', '9', '201']],
    ['202 an unsupported processing id -> AR', (id) => oru(id, { processing: 'D' }), 'AR', ['MSH', '1', '11', '202']],
    ['203 an unsupported version -> AR', (id) => oru(id, { version: '2.9' }), 'AR', ['MSH', '1', '12', '203']],
    ['204 a sending facility the key may not use -> AR', (id) => oru(id, { sender: 'OTHER-LAB' }), 'AR', ['MSH', '1', '4', '204']],
  ])('%s', async (_name, build, code, error) => {
    const controlId = unique('P');
    const ack = await ackOf(build(controlId));
    expect(valueAt(msaOf(ack), 1)).toBe(code);
    expect(valueAt(msaOf(ack), 2)).toBe(controlId);
    expect(errorsAsRead(ack, '2.5.1')).toEqual([error]);
  });

  it('201/200 put ERR-2 on the MSH-9 component (2 trigger event, 1 message type)', async () => {
    const event = await ackOf(oru(unique('P'), { type: 'ADT^A99^ADT_A01' }));
    expect(valueAt(errsOf(event)[0], 2, 5)).toBe('2');
    const type = await ackOf(oru(unique('P'), { type: 'DFT^P03' }));
    expect(valueAt(errsOf(type)[0], 2, 5)).toBe('1');
  });

  it('203: the ACK is written in the version the sender named (2.9), ERR in the 2.5+ layout', async () => {
    const controlId = unique('P');
    const ack = await ackOf(oru(controlId, { version: '2.9' }));
    expectHeader(ack, '2.9', controlId);
  });

  it('104 a batch of more than 100 messages -> one AR 104', async () => {
    const body = Array.from({ length: 101 }, (_, i) => oru(`${unique('M')}-${i}`)).join('');
    const ack = await ackOf(body);
    expect(valueAt(msaOf(ack), 1)).toBe('AR');
    expect(errorsAsRead(ack, '2.5.1')).toEqual([['MSH', '', '', '104']]);
  });

  it('205 a control id reused for another message -> AR 205 at MSH^1^10; the same message again -> its first ACK', async () => {
    const controlId = unique('D');
    const first = oru(controlId);
    const firstAck = await post(first);
    expect(valueAt(msaOf(parseHl7Message(firstAck.text)), 1)).toBe('AA');
    expect((await post(first)).text).toBe(firstAck.text);
    const other = await ackOf(oru(controlId));
    expect(valueAt(msaOf(other), 1)).toBe('AR');
    expect(errorsAsRead(other, '2.5.1')).toEqual([['MSH', '1', '10', '205']]);
  });
});

describe('table 0123 (OBR-25): every value a result can carry', () => {
  const summaryStatus = async (accession: string) => {
    const res = await call(stack, 'GET', '/exportHl7PatientSummary?patientId=demo-patient-1&limit=200', {
      headers: { 'x-api-key': 'demo-export-oru-key' },
    });
    const obr = res.text.split('\r').find((segment) => segment.startsWith('OBR') && segment.includes(`|${accession}^`));
    return obr?.split('|')[25];
  };

  // stored as preliminary (the result's status), and OBR-25 exported as the lab sent it (issue 27: lossless order status)
  it.each([
    ['A', 'A'],
    ['R', 'R'],
    ['O', 'O'],
    ['I', 'I'],
    ['S', 'S'],
    ['P', 'P'],
    ['F', 'F'],
    ['C', 'C'],
  ])('OBR-25 %s with OBX -> AA, exported as %s', async (status, exported) => {
    const accession = unique('T123');
    const ack = await ackOf(oru(unique('S'), { status, accession }));
    expect(valueAt(msaOf(ack), 1)).toBe('AA');
    expect(errsOf(ack)).toEqual([]);
    expect(await summaryStatus(accession)).toBe(exported);
  });

  it('OBR-25 X (cancelled) with OBX -> AA', async () => {
    expect(valueAt(msaOf(await ackOf(oru(unique('S'), { status: 'X' }))), 1)).toBe('AA');
  });
});

describe('enhanced mode (MSH-15 / MSH-16)', () => {
  it.each<[string, string, OruOptions, string, string[]]>([
    ['AL^AL, accepted -> the application ACK', 'AL|AL', {}, 'AA', []],
    ['AL^AL, content error -> the application ACK AE', 'AL|AL', { status: 'Q' }, 'AE', ['103']],
    ['AL^NE, accepted -> the accept ACK CA', 'AL|NE', {}, 'CA', []],
    ['AL^NE, content error -> CE with the ERR', 'AL|NE', { status: 'Q' }, 'CE', ['103']],
    ['AL^NE, unsupported processing id -> CR', 'AL|NE', { processing: 'X' }, 'CR', ['202']],
    ['AL^NE, unsupported event -> CR', 'AL|NE', { type: 'ORU^R99' }, 'CR', ['201']],
    ['NE^ER, accepted -> CA (HTTP answers every request)', 'NE|ER', {}, 'CA', []],
    ['NE^ER, content error -> the application ACK AE', 'NE|ER', { status: 'Q' }, 'AE', ['103']],
    ['ER^SU, accepted -> the application ACK AA', 'ER|SU', {}, 'AA', []],
    ['ER^SU, content error -> CE', 'ER|SU', { status: 'Q' }, 'CE', ['103']],
  ])('%s', async (_name, ackTypes, options, msa1, codes) => {
    const controlId = unique('EN');
    const ack = await ackOf(oru(controlId, { ...options, ackTypes }));
    expect(ack.segments.filter((s) => s.name === 'MSH')).toHaveLength(1); // one message per HTTP answer
    expect(valueAt(msaOf(ack), 1)).toBe(msa1);
    expect(valueAt(msaOf(ack), 2)).toBe(controlId);
    expect(errsOf(ack).map((err) => valueAt(err, 3))).toEqual(codes);
  });

  it('a v2.4 sender in enhanced mode gets its accept ACK in the 2.4 layout', async () => {
    const controlId = unique('EN');
    const ack = await ackOf(oru(controlId, { version: '2.4', ackTypes: 'AL|NE', status: 'Q' }));
    expectHeader(ack, '2.4', controlId);
    expect(valueAt(msaOf(ack), 1)).toBe('CE');
    expect(valueAt(msaOf(ack), 3)).toMatch(/OBR-25/);
    expect(errorsAsRead(ack, '2.4')).toEqual([['OBR', '1', '25', '103']]);
  });

  it('the resend of an accepted message returns the same accept ACK', async () => {
    const body = oru(unique('EN'), { ackTypes: 'AL|NE' });
    const first = await post(body);
    expect(valueAt(msaOf(parseHl7Message(first.text)), 1)).toBe('CA');
    expect((await post(body)).text).toBe(first.text);
  });
});

describe('batch ACKs', () => {
  const batch = (count: string, ids: string[]) =>
    `FHS|^~\\&|LIS|DEMO-LAB-LIS|||20240301||||FILE-${ids[0]}\rBHS|^~\\&|LIS|DEMO-LAB-LIS|||20240301||||BATCH-${ids[0]}\r${ids.map((id) => oru(id)).join('')}BTS|${count}\rFTS|1\r`;
  const lines = (text: string) => text.split('\r').filter(Boolean);

  it('FHS-11 and BHS-11 are distinct; FHS-12/BHS-12 reference the received ids; BTS-1 the ACK count; a matching BTS-1 has no note', async () => {
    const ids = [unique('B'), unique('B')];
    const res = await post(batch('2', ids));
    expect(res.status).toBe(200);
    const out = lines(res.text);
    const fhs = out[0]!.split('|');
    const bhs = out[1]!.split('|');
    expect(fhs[0]).toBe('FHS');
    expect(bhs[0]).toBe('BHS');
    expect(fhs[10]).toMatch(/^[0-9A-F]{20}$/);
    expect(bhs[10]).toMatch(/^[0-9A-F]{20}$/);
    expect(fhs[10]).not.toBe(bhs[10]);
    expect(fhs[11]).toBe(`FILE-${ids[0]}`);
    expect(bhs[11]).toBe(`BATCH-${ids[0]}`);
    expect(out.filter((l) => l.startsWith('MSA')).map((l) => l.split('|').slice(1, 3))).toEqual(ids.map((id) => ['AA', id]));
    expect(out).toContain('BTS|2');
    expect(out[out.length - 1]).toBe('FTS|1');
  });

  it('a BTS-1 that does not match the messages held -> BTS-2 says so; each message held is still acknowledged', async () => {
    const ids = [unique('B'), unique('B')];
    const out = lines((await post(batch('3', ids))).text);
    const bts = out.find((l) => l.startsWith('BTS'))!.split('|');
    expect(bts[1]).toBe('2');
    expect(bts[2]).toMatch(/^BTS-1 says 3 messages, the batch held 2/);
    expect(out.filter((l) => l.startsWith('MSA')).map((l) => l.split('|')[1])).toEqual(['AA', 'AA']);
  });

  it('a batch of 2.3 messages: each ACK in the 2.3 layout', async () => {
    const ids = [unique('B')];
    const body = `BHS|^~\\&|LIS|DEMO-LAB-LIS|||20240301||||BATCH-${ids[0]}\r${oru(ids[0]!, { version: '2.3', status: 'Q' })}BTS|1\r`;
    const out = lines((await post(body)).text);
    expect(out[0]).toMatch(/^BHS\|/);
    const msh = out.find((l) => l.startsWith('MSH'))!.split('|');
    expect(msh[8]).toBe('ACK^R01');
    expect(msh[11]).toBe('2.3');
    expect(out.find((l) => l.startsWith('ERR'))).toMatch(/^ERR\|OBR\^1\^25\^103&Table value not found&HL70357$/);
    expect(out).toContain('BTS|1');
  });
});
