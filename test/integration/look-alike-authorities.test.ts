/**
 * Look-alike assigning authorities (docs/write-authority.md "Patient resolution"): an authority is
 * compared after NFKC, removal of invisible characters and case folding, so a spelling that only
 * looks different is the owner's authority (refused to anyone else), and one that still holds
 * non-ASCII letters (a Cyrillic Е in DEMO-LAB) is refused outright, naming the field. Over HTTP, as
 * a partner made with the operator CLIs.
 */
import type { LocalStack } from '../../lib/local/stack';
import { CHART_PATIENT, smallReport, type Json } from '../fhir-intake/fixtures';
import { call, startTestStack } from '../support/local-stack';
import { createPartnerKey, operator } from '../support/operator-cli';

jest.setTimeout(120_000);

let stack: LocalStack;
let hl7Key = '';
let fhirKey = '';
let seq = 0;

beforeAll(async () => {
  stack = await startTestStack();
  const created = await operator('partners', ['create', '--partner-id', 'mimic-lab', '--tier', 'standard', '--sender-id', 'MIMIC-LIS']);
  if (created.code !== 0) throw new Error(`partners create failed (${created.code}): ${created.err}`);
  hl7Key = (await createPartnerKey('mimic-lab', ['interop:ingest:hl7'])).secret;
  fhirKey = (await createPartnerKey('mimic-lab', ['interop:ingest:fhir'])).secret;
});

afterAll(async () => {
  await stack?.close();
});

function oru(authority: string): string {
  const id = `LA${Date.now().toString(36).toUpperCase()}${++seq}`;
  return (
    [
      `MSH|^~\\&|LIS|MIMIC-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${id}|P|2.5.1|||||||UNICODE UTF-8`,
      `PID|1||L-42^^^${authority}^MR||Sample^Alex||19800412|F`,
      `OBR|1|ORD1|${id}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||F`,
      'OBX|1|NM|2345-7^Glucose^LN||98|mg/dL|70-99|N|||F',
    ].join('\r') + '\r'
  );
}

const ack = async (authority: string) => {
  const res = await call(stack, 'POST', '/receiveHl7', {
    headers: { 'x-api-key': hl7Key, 'content-type': 'application/hl7-v2; charset=utf-8' },
    body: oru(authority),
  });
  expect(res.status).toBe(200);
  const msa = res.text
    .split('\r')
    .find((s) => s.startsWith('MSA|'))!
    .split('|');
  const err = res.text.split('\r').find((s) => s.startsWith('ERR|'));
  return { code: msa[1], err: err ?? '' };
};

describe('HL7 PID-3 authorities that look like another partner’s', () => {
  it.each([
    ['a zero-width space', 'DEMO-LAB\u200b'],
    ['lower case', 'demo-lab'],
    ['full-width letters', '\uff24\uff25\uff2d\uff2f-\uff2c\uff21\uff22'],
  ])('%s is demo-lab’s authority: AE, PID-3 named', async (_label, authority) => {
    const answer = await ack(authority);
    expect(answer.code).toBe('AE');
    expect(answer.err).toContain('PID^1^3');
  });

  it('a Cyrillic letter in it is refused as a look-alike: AE, PID-3 named', async () => {
    const answer = await ack('D\u0415MO-LAB');
    expect(answer.code).toBe('AE');
    expect(answer.err).toContain('PID^1^3');
    expect(answer.err).toMatch(/visible ASCII/);
  });

  it('an authority nobody owns, in visible ASCII, is taken (AA): the rule refuses look-alikes only', async () => {
    expect((await ack('MIMIC-AUTH')).code).toBe('AA');
  });
});

describe('FHIR identifier systems', () => {
  it('URN:INTEROP:MRN:DEMO-LAB (upper case) is demo-lab’s authority: 403; a Cyrillic look-alike system is a 400', async () => {
    const post = (system: string) =>
      call(stack, 'POST', '/fhir/DiagnosticReport', {
        headers: { 'x-api-key': fhirKey, 'content-type': 'application/fhir+json' },
        body: JSON.stringify(smallReport(`LA-FHIR-${++seq}`, { ...CHART_PATIENT, identifier: [{ system, value: 'L-42' }] } as Json)),
      });
    expect((await post('URN:INTEROP:MRN:DEMO-LAB')).status).toBe(403);
    expect((await post('D\u0415MO-LAB')).status).toBe(400);
  });
});
