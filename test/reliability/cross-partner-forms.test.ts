/**
 * Cross-partner section, form intake (issue 12): a second partner tries to overwrite, shadow,
 * link-poison or probe the first partner's forms. Every attempt is counted; 0 may succeed.
 *
 * Owner: demo-forms (demo-forms-key), owns demo-form-tool and demo-forms.
 * Attacker A: demo-lab (demo-all-key, has the forms scope), owns only demo-lab-forms.
 * Attacker B: "rival-forms", a partner MISCONFIGURED to also own demo-form-tool: even then its
 * submission ids and links live apart from the owner's (both are scoped by partner).
 */
import { relatePartner } from '../support/operator-cli';
import { randomUUID } from 'node:crypto';
import { dynamoDbClient } from '../../lib/aws/clients';
import { Scopes } from '../../lib/config/service';
import { hashApiKey, keyIdFromHash } from '../../lib/keys/api-key';
import { ApiKeyStore } from '../../lib/keys/api-key-store';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack, type HttpResult } from '../support/local-stack';

const OWNER = 'demo-forms-key';
const ATTACKER = 'demo-all-key';
const RIVAL = 'rival-forms-key';
let stack: LocalStack;
const attempts: Array<{ name: string; succeeded: boolean }> = [];

beforeAll(async () => {
  stack = await startTestStack({ backgroundWorkers: true });
  const keys = new ApiKeyStore(dynamoDbClient(), stack.tables.keys);
  await keys.putPartner(
    {
      partnerId: 'rival-forms',
      name: 'Rival Forms',
      policy: 'active',
      rateLimit: 1000,
      rateWindowSeconds: 60,
      allowedSenderIds: [],
      allowedFormSourceIds: ['demo-form-tool', 'rival-tool'],
    },
    { ifMissing: true },
  );
  const keyHash = hashApiKey(RIVAL);
  await keys.putKey({
    keyHash,
    keyId: keyIdFromHash(keyHash),
    partnerId: 'rival-forms',
    label: RIVAL,
    scopes: [Scopes.ingestForms],
    status: 'active',
    createdAt: new Date().toISOString(),
  });
  // the rival serves the patient too: the link-poison case is about links, not relationships
  await relatePartner('rival-forms', 'demo-patient-1');
});

afterAll(async () => {
  await stack?.close();
  const succeeded = attempts.filter((a) => a.succeeded);
  console.log(
    `cross-partner forms: ${attempts.length} attempts, ${succeeded.length} succeeded${succeeded.length ? `: ${succeeded.map((a) => a.name).join(', ')}` : ''}`,
  );
});

function post(key: string, payload: Record<string, unknown>): Promise<HttpResult> {
  return call(stack, 'POST', '/receiveFormIntakeScope', {
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    body: JSON.stringify({ payload: { formId: 'intake', answers: { q: 'owner' }, submissionId: `s-${randomUUID()}`, ...payload } }),
  });
}

interface View {
  state: string;
  reason?: string;
  patientId?: string;
  answers: Record<string, unknown>;
  partnerId: string;
}

async function view(packetId: string, done: (v: View) => boolean = (v) => v.state !== 'pending_match'): Promise<View> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const res = await call(stack, 'GET', `/interopInbox/${packetId}`, { headers: { 'x-api-key': 'demo-inbox-key' } });
    if (res.status === 200 && done(res.json<View>())) return res.json<View>();
    if (Date.now() > deadline) throw new Error(`packet ${packetId}: ${res.status}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function record(name: string, succeeded: boolean) {
  attempts.push({ name, succeeded });
  expect({ name, succeeded }).toEqual({ name, succeeded: false });
}

const alex = { firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12', email: 'alex.sample@example.com' };
const stranger = { firstName: 'Harriet', lastName: 'Unrelated', dob: '1961-01-01' };

describe('cross-partner: form intake', () => {
  it("overwrite: another partner resending the owner's submission with other content changes nothing", async () => {
    const submissionId = `own-${randomUUID()}`;
    const first = await post(OWNER, { sourceSystemId: 'demo-form-tool', submissionId, patient: stranger, answers: { q: 'owner' } });
    const ownerId = first.json<{ packetId: string }>().packetId;
    const a = await post(ATTACKER, { sourceSystemId: 'demo-form-tool', submissionId, patient: alex, answers: { q: 'attacker' } });
    record('overwrite via unowned source (403 expected)', a.status !== 403);
    const b = await post(RIVAL, { sourceSystemId: 'demo-form-tool', submissionId, patient: alex, answers: { q: 'rival' } });
    record("overwrite via co-owned source lands on the owner's packet", b.status < 300 && b.json<{ packetId: string }>().packetId === ownerId);
    const seen = await view(ownerId, () => true);
    record('owner packet content changed', seen.answers.q !== 'owner' || seen.partnerId !== 'demo-forms');
  });

  it('shadow: another partner taking a submission id first does not block the owner', async () => {
    const submissionId = `shadow-${randomUUID()}`;
    const a = await post(ATTACKER, { sourceSystemId: 'demo-form-tool', submissionId, patient: alex });
    record('shadow via unowned source accepted', a.status !== 403);
    const b = await post(RIVAL, { sourceSystemId: 'demo-form-tool', submissionId, patient: alex });
    expect(b.status).toBe(202);
    const owner = await post(OWNER, { sourceSystemId: 'demo-form-tool', submissionId, patient: stranger });
    record('owner refused after a shadowing submission', owner.status !== 202);
    record("owner answered with the rival's packet", owner.json<{ packetId: string }>().packetId === b.json<{ packetId: string }>().packetId);
  });

  it("link-poison: another partner's link never routes the owner's packets; a contradicted link goes to review", async () => {
    const externalPatientId = `ft-${randomUUID().slice(0, 8)}`;
    const a = await post(ATTACKER, { sourceSystemId: 'demo-form-tool', patient: { ...alex, externalPatientId } });
    record('link-poison via unowned source accepted', a.status !== 403);
    // the rival, co-owning the source id, gets its own link for this external id -> demo-patient-1
    const b = await post(RIVAL, { sourceSystemId: 'demo-form-tool', patient: { ...alex, externalPatientId } });
    expect((await view(b.json<{ packetId: string }>().packetId)).state).toBe('matched');
    // the owner's packet for a different person with the same external id is not routed by that link
    const owner = await post(OWNER, { sourceSystemId: 'demo-form-tool', patient: { ...stranger, externalPatientId }, answers: { followUp: 'HIV test' } });
    const seen = await view(owner.json<{ packetId: string }>().packetId);
    record("owner packet routed by another partner's link", seen.state === 'matched');
    // even the owner's own link does not override a different name and birth date
    const own = await post(OWNER, { sourceSystemId: 'demo-forms', patient: { ...alex, externalPatientId } });
    expect((await view(own.json<{ packetId: string }>().packetId)).state).toBe('matched');
    const contradicting = await post(OWNER, { sourceSystemId: 'demo-forms', patient: { ...stranger, externalPatientId } });
    const held = await view(contradicting.json<{ packetId: string }>().packetId);
    record('contradicted link routed', held.state === 'matched' || held.reason !== 'link_conflict');
  });

  it('probe: answers are identical whether a patient exists, where a packet went, or it was sent before', async () => {
    const shapes = new Set<string>();
    const probes = [
      { sourceSystemId: 'demo-lab-forms', patientId: 'demo-patient-1', patient: alex },
      { sourceSystemId: 'demo-lab-forms', patientId: 'demo-patient-77', patient: alex },
      { sourceSystemId: 'demo-lab-forms', patientId: 'demo-patient-2', patient: stranger },
      { sourceSystemId: 'demo-lab-forms', patient: alex },
      { sourceSystemId: 'demo-lab-forms', patient: stranger },
    ];
    for (const p of probes) {
      const res = await post(ATTACKER, p);
      const body = res.json<Record<string, unknown>>();
      shapes.add(`${res.status} ${Object.keys(body).sort().join(',')} ${String(body.status)}`);
    }
    const dup = { sourceSystemId: 'demo-lab-forms', submissionId: `probe-${randomUUID()}`, patient: alex };
    const first = await post(ATTACKER, dup);
    await new Promise((r) => setTimeout(r, 1500)); // let the worker decide it
    const again = await post(ATTACKER, dup);
    for (const res of [first, again]) {
      const body = res.json<Record<string, unknown>>();
      shapes.add(`${res.status} ${Object.keys(body).sort().join(',')} ${String(body.status)}`);
    }
    record('intake answers differ by chart or routing', shapes.size !== 1);
    expect([...shapes]).toEqual(['202 packetId,requestId,status accepted']);
  });
});
