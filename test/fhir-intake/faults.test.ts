/**
 * FHIR intake under dependency faults (issue 29, the fault suite's rules for the new routes): a
 * transaction Bundle whose writes are cut by a DynamoDB, KMS or SQS failure at each call in turn
 * answers 503 OperationOutcome (Retry-After, no internals), or succeeds when the failed call was one
 * the intake tolerates (a notification, a matching-queue send: retried later); sending the same
 * Bundle again completes it (each entry 201 or 200), and a third time replays the stored answer. When
 * the fault hits the completion of the idempotency record (the work is done), the resend is told to
 * wait for the claim's lease (409 + Retry-After), as on every idempotent route.
 */
import type { LocalStack } from '../../lib/local/stack';
import { BULK_KEYS, FaultInjector, jsonPost, outcomeShapeIssues, send, startReliabilityStack } from '../reliability/support';
import { questionnaireResponse, smallReport, type Json } from './fixtures';

let stack: LocalStack;
let faults: FaultInjector;
beforeAll(async () => {
  stack = await startReliabilityStack();
  faults = new FaultInjector().install();
});
afterAll(async () => {
  faults?.restore();
  await stack?.close();
});

function bundle(tag: string): Json {
  const entry = (resource: Json) => ({ resource, request: { method: 'POST', url: resource.resourceType } });
  return {
    resourceType: 'Bundle',
    type: 'transaction',
    identifier: { system: 'urn:demo-lab:bundles', value: tag },
    entry: [entry(smallReport(`${tag}-A`)), entry(smallReport(`${tag}-B`)), entry(questionnaireResponse(`${tag}-Q`))],
  };
}

const post = (body: unknown) => send(jsonPost('/fhir', BULK_KEYS.all.secret, JSON.stringify(body), { 'content-type': 'application/fhir+json' }));

describe('a transaction cut by a failing dependency', () => {
  it('answers 503 (or succeeds), and the same Bundle sent again completes it', async () => {
    // how many AWS calls a clean transaction makes (the window the faults are placed in)
    faults.arm(undefined);
    const clean = await post(bundle(`F-CLEAN-${Date.now()}`));
    expect(clean.status).toBe(200);
    const calls = faults.calls.length;
    expect(calls).toBeGreaterThan(10);
    // the authorizer's calls (key, rate limit) come first: the intake's own calls start after them
    const firstOwn = faults.calls.findIndex((call) => !/api-keys|rate-limits/.test(call.input)) + 1;
    expect(firstOwn).toBeGreaterThan(0);
    const seen = { unavailable: 0, succeeded: 0, leased: 0 };
    for (let n = firstOwn; n <= calls; n++) {
      const tag = `F-${n}-${Date.now()}`;
      faults.arm(n, 'throttling');
      const first = await post(bundle(tag));
      faults.arm(undefined);
      if (first.status === 503) {
        seen.unavailable++;
        expect(outcomeShapeIssues(first)).toEqual([]);
        expect(first.headers['retry-after']).toBeDefined();
        expect(first.body).not.toMatch(/stack|Error:|at \w+ \(/);
      } else expect(first.status).toBe(200);
      if (first.status === 200) seen.succeeded++;
      const again = await post(bundle(tag));
      if (again.status === 409) {
        // the fault hit the idempotency record's completion: the work is done, the claim waits for its
        // lease (Retry-After), then the resend replays the same work (lib/results/idempotency.ts)
        expect(first.status).toBe(200);
        expect(again.headers['retry-after']).toBeDefined();
        seen.leased++;
        continue;
      }
      expect(again.status).toBe(200);
      const statuses = again.json<Json>().entry.map((e: Json) => e.response.status as string);
      expect(statuses.every((s: string) => s === '201 Created' || s === '200 OK')).toBe(true);
      // and once more: everything is stored now, nothing new (a replay of the stored answer)
      const third = await post(bundle(tag));
      expect(third.headers['idempotent-replayed']).toBe('true');
    }
    expect(seen.unavailable).toBeGreaterThan(0);
    console.info(`fhir-intake faults: ${calls} AWS calls per transaction, a fault at each of them: ${JSON.stringify(seen)}`);
  });
});
