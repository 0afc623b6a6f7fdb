/**
 * FHIR intake between two lab partners (issue 29, the two-partner rules of docs/write-authority.md):
 * demo-lab (senders demo-lab / DEMO-LAB-LIS, authority DEMO-LAB, form source demo-lab-forms) and a
 * second lab made here (sender SECOND-LIS, authority SECOND-AUTH, form source second-forms). Neither
 * may file under the other's assigning authority, form source or sender; the same accession number
 * and the same Bundle.identifier of two labs never collide; a refusal says nothing about whether the
 * other partner, its patients or its submissions exist.
 */
import { Scopes } from '../../lib/config/service';
import { IdentityClaimStore } from '../../lib/keys/identity-claims';
import type { LocalStack } from '../../lib/local/stack';
import { BULK_KEYS, captureLogs, createKey, jsonPost, keyStore, send, snapshot, diffSnapshots, startReliabilityStack, type Res } from '../reliability/support';
import { CHART_PATIENT, questionnaireResponse, smallReport, type Json } from './fixtures';

let stack: LocalStack;
const FIRST = BULK_KEYS.all.secret; // demo-lab, every scope
const SECOND = 'fhir-intake-second-lab-key';

beforeAll(async () => {
  stack = await startReliabilityStack();
  const store = keyStore(stack);
  await store.putPartner(
    {
      partnerId: 'second-lab',
      name: 'Second Lab',
      policy: 'active',
      rateLimit: 1000,
      rateWindowSeconds: 60,
      allowedSenderIds: ['SECOND-LIS'],
      allowedFormSourceIds: ['second-forms'],
      assigningAuthorities: ['SECOND-AUTH'],
    },
    { ifMissing: true },
  );
  await new IdentityClaimStore(store.db, store.table).claim('authority', 'SECOND-AUTH', 'second-lab', new Date());
  await createKey(stack, { secret: SECOND, partnerId: 'second-lab', scopes: [Scopes.ingestFhir], rateLimit: 100000, rateWindowSeconds: 60 });
});
afterAll(async () => {
  await stack?.close();
});

const post = (key: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Res> =>
  send(jsonPost(path, key, JSON.stringify(body), { 'content-type': 'application/fhir+json', ...headers }));
const resultIdOf = (res: Res) => /resultId (lr_[0-9a-f]{32})/.exec(res.body)?.[1];
const patientIn = (system: string, value: string): Json => ({
  ...CHART_PATIENT,
  identifier: [{ system, value }],
  name: [{ family: 'Other', given: ['Person'] }],
});

describe('two lab partners on the FHIR intake routes', () => {
  it("each is refused the other's assigning authority (403, the same answer whatever the identifier), nothing stored", async () => {
    const before = await snapshot(stack);
    const intoFirst = await post(SECOND, '/fhir/DiagnosticReport', smallReport('TP-1', patientIn('DEMO-LAB', 'LAB-PATIENT-1')));
    const intoSecond = await post(FIRST, '/fhir/DiagnosticReport', smallReport('TP-2', patientIn('SECOND-AUTH', 'S-PATIENT-1')));
    const intoSecondOther = await post(FIRST, '/fhir/DiagnosticReport', smallReport('TP-3', patientIn('SECOND-AUTH', 'NEVER-SEEN')));
    for (const res of [intoFirst, intoSecond, intoSecondOther]) {
      expect(res.status).toBe(403);
      expect(res.json<Json>().issue[0]).toMatchObject({ code: 'forbidden', expression: ['DiagnosticReport.subject'] });
    }
    expect(intoSecond.json<Json>().issue).toEqual(intoSecondOther.json<Json>().issue);
    expect(diffSnapshots(before, await snapshot(stack), ['rateLimit', 'audit'])).toEqual([]);
  });

  it("a sender named in meta.source that is not the partner's is not used: the result is filed under the partner's own sender", async () => {
    const res = await post(SECOND, '/fhir/DiagnosticReport', smallReport('TP-SENDER', patientIn('SECOND-AUTH', 'S-2'), { meta: { source: 'DEMO-LAB-LIS' } }));
    expect(res.status).toBe(201);
    const mine = await post(SECOND, '/fhir/DiagnosticReport', smallReport('TP-SENDER', patientIn('SECOND-AUTH', 'S-2'), { meta: { source: 'SECOND-LIS' } }));
    // the same sender (SECOND-LIS) and accession: the same result, nothing new
    expect(mine.status).toBe(200);
    expect(resultIdOf(mine)).toBe(resultIdOf(res));
  });

  it('the same accession number from two labs is two results', async () => {
    const first = await post(FIRST, '/fhir/DiagnosticReport', smallReport('TP-SAME-ACC'));
    const second = await post(SECOND, '/fhir/DiagnosticReport', smallReport('TP-SAME-ACC', patientIn('SECOND-AUTH', 'S-3')));
    expect(first.status).toBe(201);
    expect(second.status).toBe(201);
    expect(resultIdOf(first)).not.toBe(resultIdOf(second));
  });

  it("each is refused the other's form source, the same 403 as a source nobody owns", async () => {
    const foreign = await post(SECOND, '/fhir/QuestionnaireResponse', questionnaireResponse('TP-Q1'));
    const nobody = await post(SECOND, '/fhir/QuestionnaireResponse', questionnaireResponse('TP-Q1', undefined, { meta: { source: 'nobody-forms' } }));
    expect(foreign.status).toBe(403);
    expect(nobody.status).toBe(403);
    expect(foreign.json<Json>().issue).toEqual(nobody.json<Json>().issue);
    const own = await post(SECOND, '/fhir/QuestionnaireResponse', questionnaireResponse('TP-Q1', undefined, { meta: { source: 'second-forms' } }));
    expect(own.status).toBe(201);
  });

  it('the same Bundle.identifier from two labs is two Bundles (idempotency is per partner)', async () => {
    const bundle = (patient: Json) => ({
      resourceType: 'Bundle',
      type: 'batch',
      identifier: { system: 'urn:shared', value: 'B-1' },
      entry: [{ resource: smallReport(`TP-B-${patient.identifier[0].system}`, patient), request: { method: 'POST', url: 'DiagnosticReport' } }],
    });
    const first = await post(FIRST, '/fhir', bundle(CHART_PATIENT));
    const second = await post(SECOND, '/fhir', bundle(patientIn('SECOND-AUTH', 'S-4')));
    expect(first.status).toBe(200);
    expect(second.status).toBe(200);
    expect(second.headers['idempotent-replayed']).toBeUndefined();
    expect(second.json<Json>().entry[0].response.status).toBe('201 Created');
  });

  it('no PHI in logs or answers: names, MRNs, birth dates and form answers stay out (stored, refused, conflicting)', async () => {
    const logs = captureLogs();
    const phi = { family: 'Quixotewright', given: 'Belphoebe', mrn: 'PHI-MRN-77123', dob: '1961-07-19', answer: 'Tinnitus since the flood' };
    const patient = {
      ...CHART_PATIENT,
      identifier: [{ system: 'DEMO-LAB', value: phi.mrn }],
      name: [{ family: phi.family, given: [phi.given] }],
      birthDate: phi.dob,
    };
    const answers: Res[] = [];
    try {
      answers.push(await post(FIRST, '/fhir/DiagnosticReport', smallReport('TP-PHI-1', patient)));
      answers.push(await post(FIRST, '/fhir/DiagnosticReport', smallReport('TP-PHI-2', patient, { status: 'bogus' })));
      answers.push(await post(SECOND, '/fhir/DiagnosticReport', smallReport('TP-PHI-3', patient)));
      const qr = questionnaireResponse('TP-PHI-Q', { family: phi.family, given: [phi.given], birthDate: phi.dob });
      qr.item[6].answer[0].valueString = phi.answer;
      answers.push(await post(FIRST, '/fhir/QuestionnaireResponse', qr));
      qr.item[6].answer[0].valueString = `${phi.answer}!`;
      answers.push(await post(FIRST, '/fhir/QuestionnaireResponse', qr));
    } finally {
      logs.restore();
    }
    expect(answers.map((a) => a.status)).toEqual([201, 400, 403, 201, 409]);
    const seen = [...logs.lines, ...answers.map((a) => a.body)].join('\n');
    for (const value of Object.values(phi)) expect(seen).not.toContain(value);
    expect(logs.lines.length).toBeGreaterThan(0);
  });
});
