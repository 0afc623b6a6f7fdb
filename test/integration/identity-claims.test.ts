/**
 * Second-partner probe F1 (sender ids and form sources had no owner): a second partner made with the
 * operator CLIs (`npm run partners|keys` in-process, test/support/operator-cli.ts) against the local
 * stack. Listing demo-lab's sender id or demo-forms' form source is refused by `partners create` and
 * `partners update` with nothing changed; the probe's ORU correction under demo-lab's MSH-4 and
 * accession is then refused (AR, ERR 204 at MSH-4) and demo-lab's result exports as it was, in the
 * owner's HL7 and FHIR views; a resend of demo-lab's MSH-10 never returns demo-lab's ACK; a form
 * packet under demo-forms' source is refused (403). `partners claims` finds every demo id owned.
 */
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient } from '../../lib/aws/clients';
import { unmarshall } from '../../lib/aws/attribute-values';
import { logicalId } from '../../lib/fhir/logical-id';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack, type HttpResult } from '../support/local-stack';
import { createPartnerKey, operator } from '../support/operator-cli';

jest.setTimeout(60_000);

let stack: LocalStack;
let seq = 0;
const unique = (prefix: string) => `${prefix}${Date.now().toString(36).toUpperCase()}${(++seq).toString(36).toUpperCase()}`;

/** demo-lab's result (chart patient DEMO-000001), sent through its own HL7 key */
const ACCESSION = unique('ACC');
const FIRST_CONTROL_ID = unique('LAB');
let firstAck = '';
let resultId = '';
/** the owner's HL7 and FHIR views of it before the probe */
let ownerHl7Before = '';
let ownerFhirBefore = '';
/** the probe partner's intake key (HL7 and forms) */
let probeKey = '';

const PID = 'PID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex||19800412|F';
function oru(controlId: string, resultStatus: 'F' | 'C', glucose: string): string {
  return (
    [
      `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|20240301093000+0000||ORU^R01^ORU_R01|${controlId}|P|2.5.1`,
      PID,
      `OBR|1|ORD1|${ACCESSION}|GLU^Glucose^L|||20240301090000+0000|||||||||||||||20240301093000+0000|||${resultStatus}`,
      `OBX|1|NM|2345-7^Glucose^LN||${glucose}|mg/dL^^UCUM|70-99|N|||${resultStatus}`,
    ].join('\r') + '\r'
  );
}

const postHl7 = (message: string, key: string) =>
  call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': key, 'content-type': 'application/hl7-v2' }, body: message });
const msa = (res: HttpResult) => /(?:^|\r)MSA\|([^|]*)/.exec(res.text)?.[1];
/** `ERR-2 ERR-3.1` of each ERR segment, e.g. `MSH^1^4 204` */
const errCodes = (res: HttpResult) => [...res.text.matchAll(/(?:^|\r)ERR\|[^|]*\|([^|]*)\|([^|^]*)/g)].map((m) => `${m[1]} ${m[2]}`);
/** the message-time fields of an export (MSH-7, MSH-10) blanked */
const timeless = (hl7: string) => hl7.replace(/^(MSH(?:\|[^|\r]*){5}\|)[^|\r]*((?:\|[^|\r]*){2}\|)[^|\r]*/, '$1<time>$2<control>');
const ownerHl7 = async () => {
  const res = await call(stack, 'GET', `/exportHl7LabResult?resultId=${encodeURIComponent(resultId)}`, {
    headers: { 'x-api-key': 'demo-export-key', accept: 'application/hl7-v2' },
  });
  expect(res.status).toBe(200);
  return timeless(res.text);
};
const ownerFhir = async () => {
  const res = await call(stack, 'GET', `/fhir/DiagnosticReport/${logicalId('demo-patient-1', resultId)}`, {
    headers: { 'x-api-key': 'demo-fhir-key', accept: 'application/fhir+json' },
  });
  expect(res.status).toBe(200);
  const { meta: _meta, ...report } = res.json<Record<string, unknown>>();
  return JSON.stringify(report);
};

async function resultIds(): Promise<Set<string>> {
  const out = await dynamoDbClient().send(new ScanCommand({ TableName: stack.tables.results }));
  return new Set(
    (out.Items ?? [])
      .map((i) => unmarshall(i) as { pk: string })
      .filter((i) => i.pk.startsWith('RESULT#'))
      .map((i) => i.pk.slice(7)),
  );
}

/** Every partner and every claim, as the operator CLIs show them. */
async function partnersAndClaims(): Promise<string> {
  const partners = await operator('partners', ['list', '--json']);
  const claims = await operator('partners', ['claims', '--json']);
  expect(partners.code).toBe(0);
  return partners.out + (claims.out ? JSON.stringify((JSON.parse(claims.out) as { claims: unknown }).claims) : `claims: exit ${claims.code}`);
}

beforeAll(async () => {
  stack = await startTestStack();
  const before = await resultIds();
  const first = await postHl7(oru(FIRST_CONTROL_ID, 'F', '98'), 'demo-hl7-key');
  expect(msa(first)).toBe('AA');
  firstAck = first.text;
  const created = [...(await resultIds())].filter((id) => !before.has(id));
  expect(created).toHaveLength(1);
  resultId = created[0]!;
  ownerHl7Before = await ownerHl7();
  ownerFhirBefore = await ownerFhir();
  expect(ownerHl7Before).toContain('|98|');
  // the probe: a second partner with ids of its own and an intake key, made with the operator CLIs
  const probe = await operator('partners', ['create', 'probe-b', '--tier', 'standard', '--sender-id', 'PROBE-B', '--form-source', 'probe-b-forms']);
  expect(probe.code).toBe(0);
  probeKey = (await createPartnerKey('probe-b', ['interop:ingest:hl7', 'interop:ingest:forms'], 'probe-b intake')).secret;
});
afterAll(async () => {
  await stack?.close();
});

describe("a second partner cannot be given the first one's sender ids or form sources (probe F1)", () => {
  it('every demo partner owns its ids at start: `partners claims` exits 0 and names demo-lab and demo-forms as owners', async () => {
    const claims = await operator('partners', ['claims', '--json']);
    expect(claims.err).toBe('');
    expect(claims.code).toBe(0);
    const rows = (JSON.parse(claims.out) as { claims: Array<{ kind: string; id: string; owner?: string; status: string }> }).claims;
    expect(rows).toEqual(
      expect.arrayContaining([
        { kind: 'sender', id: 'DEMO-LAB-LIS', owner: 'demo-lab', listedBy: ['demo-lab'], status: 'owned' },
        { kind: 'sender', id: 'DEMO-LAB', owner: 'demo-lab', listedBy: ['demo-lab'], status: 'owned' },
        { kind: 'formSource', id: 'DEMO-FORMS', owner: 'demo-forms', listedBy: ['demo-forms'], status: 'owned' },
        { kind: 'formSource', id: 'DEMO-LAB-FORMS', owner: 'demo-lab', listedBy: ['demo-lab'], status: 'owned' },
      ]),
    );
  });

  it("`partners create` listing demo-lab's sender id or demo-forms' form source is refused (exit 1, the owner named) and changes nothing", async () => {
    const before = await partnersAndClaims();
    const repro = await operator('partners', [
      'create',
      'probe-c',
      '--tier',
      'standard',
      '--sender-id',
      'DEMO-LAB-LIS,demo-lab,demo-forms',
      '--form-source',
      'demo-forms,demo-lab-forms',
      '--assigning-authority',
      'PROBE-C',
    ]);
    expect(repro).toMatchObject({ code: 1, out: '' });
    expect(repro.err).toBe(
      'sender id DEMO-LAB-LIS is owned by partner demo-lab; a sender id has one owner (compared trimmed and without case); nothing changed\n',
    );
    const formsOnly = await operator('partners', ['create', 'probe-c', '--tier', 'standard', '--form-source', 'probe-c-forms,demo-forms']);
    expect(formsOnly.code).toBe(1);
    expect(formsOnly.err).toContain('form source DEMO-FORMS is owned by partner demo-forms');
    const otherCase = await operator('partners', ['create', 'probe-c', '--tier', 'standard', '--sender-id', 'demo-lab-lis']);
    expect(otherCase.code).toBe(1);
    expect(await partnersAndClaims()).toBe(before);
  });

  it("`partners update` adding demo-lab's sender id or demo-forms' form source is refused and changes nothing", async () => {
    const before = await partnersAndClaims();
    const senders = await operator('partners', ['update', 'probe-b', '--sender-id', 'PROBE-B,DEMO-LAB-LIS']);
    expect(senders).toMatchObject({ code: 1, out: '' });
    expect(senders.err).toContain('sender id DEMO-LAB-LIS is owned by partner demo-lab');
    const sources = await operator('partners', ['update', 'probe-b', '--form-source', 'probe-b-forms,demo-forms']);
    expect(sources.code).toBe(1);
    expect(sources.err).toContain('form source DEMO-FORMS is owned by partner demo-forms');
    expect(await partnersAndClaims()).toBe(before);
  });

  it("the probe's ORU correction under demo-lab's MSH-4 and accession is refused (AR 204 at MSH-4); demo-lab's result exports as before", async () => {
    // the repro: the operator tries to give the probe demo-lab's sender id (refused)
    await operator('partners', ['update', 'probe-b', '--sender-id', 'PROBE-B,DEMO-LAB-LIS']);
    const correction = await postHl7(oru(unique('PRB'), 'C', '250'), probeKey);
    expect(correction.status).toBe(200);
    expect(msa(correction)).toBe('AR');
    expect(errCodes(correction)).toContain('MSH^1^4 204');
    expect(await ownerHl7()).toBe(ownerHl7Before);
    expect(await ownerFhir()).toBe(ownerFhirBefore);
  });

  it("resending demo-lab's MSH-10 as the probe never returns demo-lab's stored ACK", async () => {
    await operator('partners', ['update', 'probe-b', '--sender-id', 'PROBE-B,DEMO-LAB-LIS']);
    const replay = await postHl7(oru(FIRST_CONTROL_ID, 'F', '98'), probeKey);
    expect(msa(replay)).toBe('AR');
    expect(replay.text).not.toBe(firstAck);
  });

  it("a form packet under demo-forms' source is refused (403)", async () => {
    await operator('partners', ['update', 'probe-b', '--form-source', 'probe-b-forms,demo-forms']);
    const res = await call(stack, 'POST', '/receiveFormIntakeScope', {
      headers: { 'x-api-key': probeKey, 'content-type': 'application/json' },
      body: JSON.stringify({
        payload: {
          sourceSystemId: 'demo-forms',
          formId: 'intake-v3',
          formName: 'Intake',
          submissionId: unique('sub-'),
          patient: { firstName: 'Probe', lastName: 'Person', dob: '1990-01-01' },
          answers: { smoker: 'no' },
        },
      }),
    });
    expect(res.status).toBe(403);
  });
});
