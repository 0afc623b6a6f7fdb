/**
 * POST /receiveHl7 against the local stack (dynalite, fauxqs, local KMS) through the local API Gateway
 * and the real authorizer: round trips of the service's own exports, ACK shapes, idempotency,
 * concurrency, malformed input.
 */
import { ChartStore } from '../../lib/chart/chart-store';
import { MrnIndex } from '../../lib/intake/mrn-index';
import { identityKeyOf, PartnerIdentityStore } from '../../lib/intake/partner-identities';
import { dynamoDbClient } from '../../lib/aws/clients';
import { parseHl7Message, firstSegment, valueAt, type ParsedMessage } from '../../lib/hl7/parser';
import type { LocalStack } from '../../lib/local/stack';
import { labResultStore, receiveDependencies } from '../../lib/results/result-wiring';
import { MAX_REQUEST_BODY_BYTES } from '../../lib/http/body-limit';
import { call, startTestStack, type HttpResult } from '../support/local-stack';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  jest.restoreAllMocks();
  await stack?.close();
});

let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36).toUpperCase()}${++seq}`;

async function post(body: string | Uint8Array, key = 'demo-hl7-key', contentType = 'application/hl7-v2'): Promise<HttpResult> {
  return call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': key, 'content-type': contentType }, body });
}

async function get(path: string, key = 'demo-export-key'): Promise<string> {
  const res = await call(stack, 'GET', path, { headers: { 'x-api-key': key } });
  expect(res.status).toBe(200);
  return res.text;
}

function ack(res: HttpResult): ParsedMessage {
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toContain('application/hl7-v2');
  return parseHl7Message(res.text);
}

const msa = (message: ParsedMessage) => valueAt(firstSegment(message, 'MSA'), 1);
const errCodes = (message: ParsedMessage) => message.segments.filter((s) => s.name === 'ERR').map((s) => valueAt(s, 3, 1));

/** The instant (epoch ms) of a TS with seconds and an offset, `yyyyMMddHHmmss[.f]±HHMM`; NaN for anything else. */
function instantOfTs(ts: string | undefined): number {
  const m = /^(\d{4})(\d{2})(\d{2})(\d{2})(\d{2})(\d{2})(?:\.\d+)?([+-])(\d{2})(\d{2})$/.exec(ts ?? '');
  if (!m) return NaN;
  const offsetMinutes = (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9]));
  return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]), Number(m[4]), Number(m[5]), Number(m[6])) - offsetMinutes * 60_000;
}

/** Rewrites an export as a partner's message: MSH-4 a sender demo-lab may use, a new MSH-10, the MRN replaced. */
function asPartnerMessage(exported: string, fromMrn: string, toMrn: string): { text: string; controlId: string } {
  const controlId = unique('C');
  const segments = exported.split('\r').filter(Boolean);
  const fields = segments[0]!.split('|');
  fields[3] = 'DEMO-LAB-LIS';
  fields[9] = controlId;
  segments[0] = fields.join('|');
  return { text: segments.join('\r').split(fromMrn).join(toMrn) + '\r', controlId };
}

async function patientIdOf(mrn: string, authority: string): Promise<string | undefined> {
  const keys = await receiveDependencies().keys();
  return new MrnIndex(dynamoDbClient(), stack.tables.chart).find(keys.patientIdentifierKey(authority, mrn));
}

/** demo-lab's own view of a person (what its ADT said), read from the chart table. */
async function partnerIdentityOf(mrn: string, authority: string, partnerId = 'demo-lab') {
  const keys = await receiveDependencies().keys();
  return new PartnerIdentityStore(dynamoDbClient(), stack.tables.chart).get(identityKeyOf(partnerId, keys.patientIdentifierKey(authority, mrn)));
}

const segmentsNamed = (text: string, names: string[]) =>
  text
    .split('\r')
    .filter((s) => names.includes(s.slice(0, 3)))
    .join('\r');

// the service's exports ask for no acknowledgement (MSH-15/16 NE/NE, enhanced mode): the answer is the accept ACK
const ACCEPTED = 'CA';

describe('round trip of the service exports through a partner (docs/write-authority.md)', () => {
  const freshMrn = unique('RT');

  it("ADT^A08 export with a new MRN -> AA; the partner's own view holds the same demographics, the chart is not written", async () => {
    const exported = await get('/exportHl7PatientAdt?patientId=demo-patient-1');
    const { text, controlId } = asPartnerMessage(exported, 'DEMO-000001', freshMrn);
    const reply = ack(await post(text));
    expect(msa(reply)).toBe(ACCEPTED);
    expect(valueAt(firstSegment(reply, 'MSA'), 2)).toBe(controlId);
    expect(valueAt(reply.segments[0], 5)).toBe('INTEROP');
    expect(await patientIdOf(freshMrn, 'DEMO-HOSP')).toBeUndefined();
    const identity = await partnerIdentityOf(freshMrn, 'DEMO-HOSP');
    const chart = await new ChartStore(dynamoDbClient(), stack.tables.chart).getPatient('demo-patient-1');
    const { patientId: _id, mrn: _mrn, ...chartDemographics } = chart!;
    const { mrn, ...demographics } = identity!.demographics;
    expect(mrn).toBe(freshMrn);
    // the clinician id is written in its short form (XCN-1 length), as every export writes it
    expect(demographics).toEqual({ ...chartDemographics, primaryCareProvider: { ...chartDemographics.primaryCareProvider, id: expect.any(String) } });
    expect(identity!.linkedPatientId).toBeUndefined(); // a new MRN in the chart's namespace names no chart patient: held
    expect(identity!.provenance).toMatchObject({ partnerId: 'demo-lab', sender: 'DEMO-LAB-LIS', sourceMessageId: controlId });
  });

  it.each(['demo-note-1', 'demo-note-3'])("MDM^T02 export of %s -> AA; filed as the partner's own document with the same content", async (noteId) => {
    const exported = await get(`/exportHl7Note?patientId=demo-patient-1&noteId=${noteId}`);
    const { text } = asPartnerMessage(exported, 'DEMO-000001', 'DEMO-000001');
    expect(msa(ack(await post(text)))).toBe(ACCEPTED);
    const documentNumber = valueAt(firstSegment(parseHl7Message(exported), 'TXA'), 12, 1);
    const again = await get(`/exportHl7Note?patientId=demo-patient-1&noteId=${encodeURIComponent(`demo-lab:${documentNumber}`)}`);
    const txa = (m: string) => firstSegment(parseHl7Message(m), 'TXA')!;
    const obx = (m: string) => firstSegment(parseHl7Message(m), 'OBX')!;
    // the same document: text, author name, times, status, authenticator name; the ids now name the sender
    expect(obx(again).fields[5]).toEqual(obx(exported).fields[5]);
    for (const field of [2, 3, 17, 19]) expect(txa(again).fields[field]).toEqual(txa(exported).fields[field]);
    // TXA-4/6 and the authentication time: as sent, offset kept (demo-note-3: -0500; docs/hl7-intake.md)
    for (const field of [4, 6]) {
      expect(Number.isFinite(instantOfTs(valueAt(txa(exported), field)))).toBe(true);
      expect(valueAt(txa(again), field)).toBe(valueAt(txa(exported), field));
    }
    expect(valueAt(txa(again), 22, 15)).toBe(valueAt(txa(exported), 22, 15));
    expect(valueAt(txa(again), 9, 2)).toBe(valueAt(txa(exported), 9, 2));
    expect(valueAt(txa(again), 22, 2)).toBe(valueAt(txa(exported), 22, 2));
    expect(valueAt(txa(again), 12, 1)).toBe(documentNumber);
    expect(valueAt(txa(again), 12, 2)).toBe('DEMO-LAB-LIS');
    expect(valueAt(txa(again), 9, 9)).not.toBe(valueAt(txa(exported), 9, 9));
    expect(valueAt(obx(again), 23, 1)).toBe('DEMO-LAB-LIS');
    // the chart's note is unchanged
    expect(segmentsNamed(await get(`/exportHl7Note?patientId=demo-patient-1&noteId=${noteId}`), ['PID', 'TXA', 'OBX'])).toBe(
      segmentsNamed(exported, ['PID', 'TXA', 'OBX']),
    );
  });

  it("MDM^T02 times keep the sender's offset; the same document resent after an upgrade (stored in UTC before) is still the same document", async () => {
    const exported = await get(`/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-3`);
    const { text } = asPartnerMessage(exported, 'DEMO-000001', 'DEMO-000001');
    const documentNumber = unique('DOC');
    const withTimes = (message: string) =>
      message
        .split('\r')
        .map((segment) => {
          if (!segment.startsWith('TXA|')) return segment;
          const fields = segment.split('|');
          fields[4] = '20240301101500-0500';
          fields[6] = '20240301101500-0500';
          fields[12] = documentNumber;
          return fields.join('|');
        })
        .join('\r');
    expect(msa(ack(await post(withTimes(text))))).toBe(ACCEPTED);
    const store = new ChartStore(dynamoDbClient(), stack.tables.chart);
    const noteId = `demo-lab:${documentNumber}`;
    const stored = await store.getNote('demo-patient-1', noteId);
    expect(stored!.createdAt).toBe('2024-03-01T10:15:00-05:00');
    const again = await get(`/exportHl7Note?patientId=demo-patient-1&noteId=${encodeURIComponent(noteId)}`);
    expect(valueAt(firstSegment(parseHl7Message(again), 'TXA'), 6)).toBe('20240301101500-0500');
    // as an earlier version stored it: the same instant in UTC
    await store.putAll([{ kind: 'note', record: { ...stored!, createdAt: '2024-03-01T15:15:00Z' } }]);
    const resent = asPartnerMessage(exported, 'DEMO-000001', 'DEMO-000001');
    expect(msa(ack(await post(withTimes(resent.text))))).toBe(ACCEPTED);
    expect((await store.getNote('demo-patient-1', noteId))!.createdAt).toBe('2024-03-01T15:15:00Z');
    // a different time is another document under the same number: refused
    const moved = withTimes(asPartnerMessage(exported, 'DEMO-000001', 'DEMO-000001').text).replaceAll('20240301101500-0500|', '20240301101600-0500|');
    const refused = ack(await post(moved));
    expect(msa(refused)).not.toBe(ACCEPTED);
    expect(errCodes(refused)).toEqual(['205']);
  });

  it('ORU^R01 summary with lab results -> AA, the re-export carries the same lab results under the sender', async () => {
    const accession = unique('ACC');
    const stored = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        data: {
          senderID: 'demo-lab',
          patientID: 'demo-patient-1',
          accessionNumber: accession,
          status: 'final',
          ResultedDateUTC: '2024-03-01T09:30:00Z',
          results: [
            { testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' },
            { testName: 'Comment', result: 'Line one\nLine | two ^ & ~ \\' },
          ],
        },
      }),
    });
    expect(stored.status).toBe(200);
    // the partner profile of demo-export-oru-key exports the summary as one ORU^R01 (demo-export-key's is an FHS/BHS batch)
    const exported = await get('/exportHl7PatientSummary?patientId=demo-patient-1&limit=200', 'demo-export-oru-key');
    const { text } = asPartnerMessage(exported, 'DEMO-000001', 'DEMO-000001');
    const reply = ack(await post(text));
    expect(msa(reply)).toBe(ACCEPTED);
    const again = await get('/exportHl7PatientSummary?patientId=demo-patient-1&limit=200', 'demo-export-oru-key');
    const labGroups = (summary: string) => {
      const segments = summary.split('\r');
      const groups: string[][] = [];
      segments.forEach((s, start) => {
        if (!(s.startsWith('OBR') && s.includes(`|${accession}^`))) return;
        const group: string[] = [];
        for (const segment of segments.slice(start + 1)) {
          if (segment.startsWith('NTE')) continue; // order comments (issue 27: stored as order.comments, written by the exports)
          if (!segment.startsWith('OBX')) break;
          group.push(segment.replace(/\|[^|]*$/, '|')); // OBX-23 names the sender: the lab's own result and the partner's copy differ there
        }
        groups.push(group);
      });
      return groups;
    };
    // the lab's own result and the partner's copy (sender DEMO-LAB-LIS): two results, the same observations
    const groups = labGroups(again);
    expect(groups).toHaveLength(2);
    expect(groups[0]).toEqual(groups[1]);
    expect(groups[0]).toEqual(labGroups(exported)[0]);
    expect(groups[0]).toHaveLength(1);
    // the comment row came back as an NTE after the OBR: the partner's copy keeps it as an order comment, not as a result row
    // one result per (sender, accession, universal service): the copy's OBR-4 is the summary's LAB^Laboratory result^L
    const copy = await labResultStore().readCurrentByAccession('DEMO-LAB-LIS', accession, 'LAB');
    expect(copy!.results.map((r) => r.testName)).toEqual(['Glucose']);
    expect(copy!.order?.comments).toEqual(['Comment: Line one\nLine | two ^ & ~ \\']);
  });
});

describe('ACKs, idempotency, errors', () => {
  const oru = (controlId: string, accession: string, status = 'F', extra = '') =>
    [
      `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${controlId}|P|2.5.1`,
      'PID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex',
      `OBR|1|ORD1|${accession}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||${status}`,
      `OBX|1|NM|2345-7^Glucose^LN||98|mg/dL^^UCUM|70-99|N|||F${extra}`,
    ].join('\r') + '\r';

  it('a LOINC-coded OBX-3 stays LOINC: the summary export writes the code and coding system the lab sent', async () => {
    const accession = unique('ACC');
    expect(msa(ack(await post(oru(unique('L'), accession))))).toBe('AA');
    const summary = await get('/exportHl7PatientSummary?patientId=demo-patient-1&limit=200', 'demo-export-oru-key');
    const segments = summary.split('\r');
    const obr = segments.findIndex((segment) => segment.startsWith('OBR') && segment.includes(`|${accession}^`));
    expect(obr).toBeGreaterThan(0);
    expect(segments[obr + 1]).toMatch(/^OBX\|1\|NM\|2345-7\^Glucose\^LN\|\|98\|/);
  });

  it('ORU -> AA; the resend gets the original ACK and stores nothing new; another message under the same id -> AR 205', async () => {
    const controlId = unique('I');
    const accession = unique('ACC');
    const first = await post(oru(controlId, accession));
    expect(msa(ack(first))).toBe('AA');
    const resend = await post(oru(controlId, accession).replace(/\r/g, '\n'));
    expect(resend.text).toBe(first.text);
    const other = ack(await post(oru(controlId, unique('ACC'))));
    expect(msa(other)).toBe('AR');
    expect(errCodes(other)).toEqual(['205']);
  });

  it('concurrent identical messages: one stored version, the same ACK or a retryable AE 206', async () => {
    const controlId = unique('K');
    const body = oru(controlId, unique('ACC'));
    const replies = await Promise.all(Array.from({ length: 6 }, () => post(body)));
    const codes = replies.map((r) => msa(ack(r)));
    expect(codes.every((c) => c === 'AA' || c === 'AE')).toBe(true);
    expect(codes).toContain('AA');
    const aa = replies.filter((r) => msa(ack(r)) === 'AA').map((r) => r.text);
    expect(new Set(aa).size).toBe(1);
    for (const r of replies.filter((r) => msa(ack(r)) === 'AE')) expect(errCodes(ack(r))).toEqual(['206']);
  });

  it.each([
    ['an invalid result status', (id: string) => oru(id, unique('ACC'), 'Q'), 'AE', '103'],
    ['an unsupported message type', (id: string) => `MSH|^~\\&|LIS|DEMO-LAB-LIS|||20240301||DFT^P03|${id}|P|2.5\rEVN|P03\r`, 'AR', '200'],
    ['an unsupported version', (id: string) => oru(id, unique('ACC')).replace('|2.5.1', '|2.9'), 'AR', '203'],
    ['a sender the key may not use', (id: string) => oru(id, unique('ACC')).replace('DEMO-LAB-LIS', 'OTHER-LAB'), 'AR', '204'],
    ['a bad escape in OBX (content)', (id: string) => oru(id, unique('ACC')).replace('|98|', '|9\\Q\\8|'), 'AE', '102'],
    ['a truncated segment id', (id: string) => oru(id, unique('ACC')) + 'OB\r', 'AR', '100'],
    ['wrong delimiters', (id: string) => oru(id, unique('ACC')).replace('MSH|^~\\&|', 'MSH|^^\\&|'), 'AR', '102'],
  ])('%s -> %s with ERR %s, never a 5xx', async (_name, build, code, errCode) => {
    const controlId = unique('E');
    const reply = ack(await post(build(controlId)));
    expect(msa(reply)).toBe(code);
    expect(errCodes(reply)).toContain(errCode);
    expect(valueAt(firstSegment(reply, 'MSA'), 2)).toBe(controlId);
    expect(valueAt(firstSegment(reply, 'ERR'), 2, 1)).toMatch(/^[A-Z][A-Z0-9]{2}$/);
  });

  it('a note for an unknown patient and one for a chart patient with other demographics -> AA (no existence oracle), held', async () => {
    const note = (id: string, pid: string) =>
      `MSH|^~\\&|EHR|DEMO-LAB-LIS|||20240301||MDM^T02|${id}|P|2.5.1\rPID|1||${pid}||A^B\rTXA|1|PN|TEXT|20240301|||||1^Doc^A|||n-${id}\rOBX|1|TX|NOTE||text\r`;
    const unknown = ack(await post(note(unique('N'), `NOPE-${unique('X')}^^^X^MR`)));
    const known = ack(await post(note(unique('N'), 'DEMO-000001^^^DEMO-HOSP^MR')));
    expect(msa(unknown)).toBe('AA');
    expect(msa(known)).toBe('AA');
    expect(known.segments.map((s) => s.name)).toEqual(unknown.segments.map((s) => s.name));
  });

  it('ACK text never quotes a submitted value', async () => {
    const reply = await post(oru(unique('V'), unique('ACC'), 'SECRETSTATUS'));
    expect(msa(ack(reply))).toBe('AE');
    expect(reply.text).not.toContain('SECRETSTATUS');
  });

  it('a batch with one bad message: batch ACK with one ACK per message', async () => {
    const ids = [unique('B'), unique('B'), unique('B')];
    const body = `FHS|^~\\&|LIS|DEMO-LAB-LIS\rBHS|^~\\&|LIS|DEMO-LAB-LIS|||20240301||||BATCH-${ids[0]}\r${oru(ids[0]!, unique('ACC'))}${oru(ids[1]!, unique('ACC')).replace('|98|', '|\\X4\\|')}${oru(ids[2]!, unique('ACC'))}BTS|3\rFTS|1\r`;
    const res = await post(body);
    expect(res.status).toBe(200);
    const lines = res.text.split('\r').filter(Boolean);
    expect(lines[0]).toMatch(/^FHS\|/);
    expect(lines[1]).toMatch(/^BHS\|/);
    expect(lines.filter((l) => l.startsWith('MSA')).map((l) => l.split('|')[1])).toEqual(['AA', 'AE', 'AA']);
    expect(lines.filter((l) => l.startsWith('MSA')).map((l) => l.split('|')[2])).toEqual(ids);
    expect(lines).toContain('BTS|3');
  });

  it('ADT^A40 is held for review, not applied', async () => {
    const reply = ack(
      await post(
        `MSH|^~\\&|EHR|DEMO-LAB-LIS|||20240301||ADT^A40^ADT_A39|${unique('M')}|P|2.5.1\rEVN|A40\rPID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex\rMRG|OLD-1^^^DEMO-HOSP^MR\r`,
      ),
    );
    expect(msa(reply)).toBe('AA');
    expect(await patientIdOf('DEMO-000001', 'DEMO-HOSP')).toBe('demo-patient-1');
  });

  it('no MSH -> 400 problem+json; wrong content type -> 415; no key -> 401/403', async () => {
    const none = await post('PID|1||X\r');
    expect(none.status).toBe(400);
    expect(none.headers.get('content-type')).toContain('application/problem+json');
    expect((await post(oru(unique('X'), 'A'), 'demo-hl7-key', 'application/json')).status).toBe(415);
    expect((await post(oru(unique('X'), 'A'), 'demo-results-key')).status).toBe(403);
  });

  it('accepts ISO-8859-1 declared in MSH-18', async () => {
    const mrn = unique('L');
    const head = `MSH|^~\\&|EHR|DEMO-LAB-LIS|||20240301||ADT^A04^ADT_A01|${unique('L')}|P|2.5||||||8859/1\rEVN|A04\rPID|1||${mrn}^^^LATIN^MR||M`;
    const body = Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from([0xfc]), Buffer.from('ller^J\xfcrgen\r', 'latin1')]);
    expect(msa(ack(await post(body)))).toBe('AA');
    const identity = await partnerIdentityOf(mrn, 'LATIN');
    expect(identity!.demographics.name).toEqual({ family: 'Müller', given: 'Jürgen' });
  });
});

describe("ADT visit, diagnoses and allergies: the sending partner's records (issue 27 item 7)", () => {
  const adt = (controlId: string, mrn: string, dg1Text: string) =>
    [
      `MSH|^~\\&|ADT|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ADT^A04^ADT_A01|${controlId}|P|2.5.1`,
      'EVN|A04|20240301093000+0000',
      `PID|1||${mrn}^^^VISITS^MR||Visit^Vera||19800202|F`,
      'PV1|1|O|CLINIC-A^201^1^DEMO||||1234^Smith^John^^^Dr||||||||||||V-77^^^DEMO^VN|||||||||||||||||||||||||202403010900+0000',
      `DG1|1|I10|E11.9^${dg1Text}^I10||20240301|W`,
      'DG1|2|I10|I10^Essential hypertension^I10||20240301|F',
      'AL1|1|DA^Drug allergy^HL70127|7980^Penicillin G^RXNORM|SV^Severe^HL70128|Hives~Wheezing',
    ].join('\r') + '\r';

  it('A04 with PV1, two DG1 and one AL1 -> AA; the partner identity holds the visit, diagnoses and allergies', async () => {
    const mrn = unique('V');
    expect(msa(ack(await post(adt(unique('A'), mrn, 'Type 2 diabetes mellitus'))))).toBe('AA');
    const identity = await partnerIdentityOf(mrn, 'VISITS');
    expect(identity!.visits).toEqual([
      {
        visitNumber: 'V-77',
        patientClass: 'O',
        location: 'CLINIC-A',
        attending: { id: '1234', name: { family: 'Smith', given: 'John', prefix: 'Dr' } },
        admitAt: '2024-03-01T09:00Z',
      },
    ]);
    expect(identity!.diagnoses).toEqual([
      { code: { code: 'E11.9', display: 'Type 2 diabetes mellitus', system: 'I10' }, type: 'W', at: '2024-03-01' },
      { code: { code: 'I10', display: 'Essential hypertension', system: 'I10' }, type: 'F', at: '2024-03-01' },
    ]);
    expect(identity!.allergies).toEqual([
      {
        allergen: { code: '7980', display: 'Penicillin G', system: 'RXNORM' },
        type: { code: 'DA', display: 'Drug allergy', system: 'HL70127' },
        severity: { code: 'SV', display: 'Severe', system: 'HL70128' },
        reactions: ['Hives', 'Wheezing'],
      },
    ]);
    expect(await patientIdOf(mrn, 'VISITS')).toBeUndefined();
  });

  it('a DG1 with a control character in its text -> AE at DG1-3, nothing stored', async () => {
    const mrn = unique('V');
    const controlId = unique('A');
    const reply = ack(await post(adt(controlId, mrn, 'Type 2\\X07\\diabetes')));
    expect(msa(reply)).toBe('AE');
    const err = firstSegment(reply, 'ERR');
    expect([valueAt(err, 2, 1), valueAt(err, 2, 2), valueAt(err, 2, 3)]).toEqual(['DG1', '1', '3']);
    expect(await partnerIdentityOf(mrn, 'VISITS')).toBeUndefined();
  });
});

describe('processing ids (MSH-11): T and D are not filed unless the stage takes them', () => {
  const oruWith = (controlId: string, accession: string, processing: string) =>
    [
      `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${controlId}|${processing}|2.5.1`,
      'PID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex',
      `OBR|1|ORD1|${accession}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
      'OBX|1|NM|2345-7^Glucose^LN||98|mg/dL^^UCUM|70-99|N|||F',
    ].join('\r') + '\r';
  const summaryHolds = async (accession: string) =>
    (await get('/exportHl7PatientSummary?patientId=demo-patient-1&limit=200', 'demo-export-oru-key')).includes(`|${accession}^`);
  const saved = process.env.HL7_ACCEPT_PROCESSING_IDS;
  afterEach(() => {
    if (saved === undefined) delete process.env.HL7_ACCEPT_PROCESSING_IDS;
    else process.env.HL7_ACCEPT_PROCESSING_IDS = saved;
  });

  it.each(['T', 'D', 'T^T', 'D^A'])('MSH-11 %s -> AR 202 at MSH-11, nothing stored; the same control id as P is then processed', async (processing) => {
    delete process.env.HL7_ACCEPT_PROCESSING_IDS;
    const controlId = unique('PT');
    const accession = unique('ACC');
    const reply = ack(await post(oruWith(controlId, accession, processing)));
    expect(msa(reply)).toBe('AR');
    expect(errCodes(reply)).toEqual(['202']);
    expect(valueAt(firstSegment(reply, 'ERR'), 2, 1)).toBe('MSH');
    expect(valueAt(firstSegment(reply, 'ERR'), 2, 3)).toBe('11');
    expect(valueAt(firstSegment(reply, 'MSA'), 2)).toBe(controlId);
    expect(await summaryHolds(accession)).toBe(false);
    // no claim was kept: the production message under the same control id is filed
    expect(msa(ack(await post(oruWith(controlId, accession, 'P'))))).toBe('AA');
    expect(await summaryHolds(accession)).toBe(true);
  });

  it('P (and an empty MSH-11) as before', async () => {
    delete process.env.HL7_ACCEPT_PROCESSING_IDS;
    expect(msa(ack(await post(oruWith(unique('PP'), unique('ACC'), 'P'))))).toBe('AA');
    expect(msa(ack(await post(oruWith(unique('PP'), unique('ACC'), ''))))).toBe('AA');
  });

  it('a stage configured with HL7_ACCEPT_PROCESSING_IDS=P,T files T messages and still refuses D', async () => {
    process.env.HL7_ACCEPT_PROCESSING_IDS = 'P,T';
    const accession = unique('ACC');
    expect(msa(ack(await post(oruWith(unique('PC'), accession, 'T'))))).toBe('AA');
    expect(await summaryHolds(accession)).toBe(true);
    const debug = ack(await post(oruWith(unique('PC'), unique('ACC'), 'D')));
    expect(msa(debug)).toBe('AR');
    expect(errCodes(debug)).toEqual(['202']);
  });

  it('a processing id outside P, T, D is refused whatever the setting', async () => {
    process.env.HL7_ACCEPT_PROCESSING_IDS = 'P,T,D,X';
    const reply = ack(await post(oruWith(unique('PX'), unique('ACC'), 'X')));
    expect(msa(reply)).toBe('AR');
    expect(errCodes(reply)).toEqual(['202']);
  });
});

describe('bounded work: the caps of HL7_INTAKE_LIMITS', () => {
  const head = (controlId: string, type = 'ORU^R01^ORU_R01') =>
    `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||${type}|${controlId}|P|2.5.1`;
  /** An ORU for an MRN the chart does not know, with the given number of OBX in each OBR group. */
  const oruGroups = (controlId: string, observations: number[], mrn = unique('CAP')) => {
    const segments = [head(controlId), `PID|1||${mrn}^^^DEMO-HOSP^MR||Capped^Casey`];
    observations.forEach((count, g) => {
      segments.push(`OBR|${g + 1}|ORD${g + 1}|${controlId}-${g + 1}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`);
      for (let o = 1; o <= count; o += 1) segments.push(`OBX|${o}|NM|T${o}^Test ${o}^L||${o}|mg/dL|1-${o + 10}|N|||F`);
    });
    return { text: segments.join('\r') + '\r', segments: segments.length };
  };
  const adtWithKin = (controlId: string, kin: number) =>
    [
      head(controlId, 'ADT^A04^ADT_A01'),
      'EVN|A04',
      `PID|1||${unique('KIN')}^^^DEMO-LAB-LIS^MR||Kinsman^Kim`,
      ...Array.from({ length: kin }, (_, i) => `NK1|${i + 1}|Relative${i + 1}^Pat|SIB^Sibling^HL70063`),
    ].join('\r') + '\r';

  it('a message at every ORU cap (2,000 segments, 50 OBR groups, unknown MRN) -> AA; time recorded', async () => {
    // 48 groups of 39 OBX and 2 of 38: MSH + PID + 50 OBR + 1,948 OBX = 2,000 segments
    const observations = [...Array.from({ length: 48 }, () => 39), 38, 38];
    const message = oruGroups(unique('AT'), observations);
    expect(message.segments).toBe(2000);
    const started = performance.now();
    const reply = ack(await post(message.text));
    const elapsed = performance.now() - started;
    expect(msa(reply)).toBe('AA');
    process.stdout.write(`receiveHl7 at the caps (2,000 segments, 50 OBR, 1,948 OBX, ${message.text.length} bytes): ${elapsed.toFixed(0)} ms\n`);
  });

  it('200 OBX in one OBR group -> AA', async () => {
    const started = performance.now();
    expect(msa(ack(await post(oruGroups(unique('AO'), [200]).text)))).toBe('AA');
    process.stdout.write(`receiveHl7 one OBR with 200 OBX: ${(performance.now() - started).toFixed(0)} ms\n`);
  });

  it('20 NK1 -> AA', async () => {
    expect(msa(ack(await post(adtWithKin(unique('AK'), 20))))).toBe('AA');
  });

  it.each([
    ['2,001 segments', () => oruGroups(unique('CS'), [...Array.from({ length: 48 }, () => 39), 38, 38]).text + 'NTE|1||one too many\r', 'NTE', '1'],
    [
      '51 OBR groups',
      () =>
        oruGroups(
          unique('CG'),
          Array.from({ length: 51 }, () => 1),
        ).text,
      'OBR',
      '51',
    ],
    ['201 OBX in one OBR group', () => oruGroups(unique('CO'), [1, 201]).text, 'OBX', '202'],
    ['21 NK1', () => adtWithKin(unique('CK'), 21), 'NK1', '21'],
  ])('%s -> AE 100 at the first segment beyond the cap, nothing stored', async (_what, build, segmentId, sequence) => {
    const body = build();
    const controlId = /\|([A-Z0-9]+)\|P\|2\.5\.1/.exec(body)![1]!;
    const reply = ack(await post(body));
    expect(msa(reply)).toBe('AE');
    expect(errCodes(reply)).toEqual(['100']);
    expect(valueAt(firstSegment(reply, 'ERR'), 2, 1)).toBe(segmentId);
    expect(valueAt(firstSegment(reply, 'ERR'), 2, 2)).toBe(sequence);
    expect(valueAt(firstSegment(reply, 'MSA'), 2)).toBe(controlId);
    // nothing claimed: the same control id with a message within the caps is processed (not AR 205)
    expect(msa(ack(await post(oruGroups(controlId, [1]).text)))).toBe('AA');
  });
});

describe('POST /receiveHl7: the 4 MiB body limit (issue 28)', () => {
  it('a body just over the limit: 413 problem+json naming it; at the limit (non-UTF-8, so carried base64): the endpoint answers, never the platform', async () => {
    const head = Buffer.from('MSH|^~\\&|LIS|NOBODY-LIS|INTEROP|TEST-HOSP|20240301093000+0000||ORU^R01^ORU_R01|BIG1|P|2.5.1|||||8859/1\rNTE|1|L|', 'latin1');
    const body = (size: number) => Buffer.concat([head, Buffer.alloc(size - head.length, 0xe9)]);
    const over = await post(body(MAX_REQUEST_BODY_BYTES + 1));
    expect(over.status).toBe(413);
    expect(over.headers.get('content-type')).toContain('application/problem+json');
    expect(over.json()).toMatchObject({ type: '/problems/payload-too-large', status: 413, requestId: over.headers.get('x-request-id') });
    expect(over.json<{ detail: string }>().detail).toContain(String(MAX_REQUEST_BODY_BYTES));
    const atLimit = await post(body(MAX_REQUEST_BODY_BYTES));
    expect(atLimit.status).toBe(200);
    expect(atLimit.text.startsWith('MSH|')).toBe(true);
  });
});
