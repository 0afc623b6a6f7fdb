/**
 * Reliability of the local stack itself: a second stack started in the same process (after the first
 * was closed) must serve requests like the first.
 *
 * Was a BUG, fixed in ebaed43 (regression test) (lib/http/middleware/audit-recording.ts line 11 `trail ??= new AuditTrail(dynamoDbClient(), ...)`,
 * lib/exports/chart-export-wiring.ts line 10 `cached ??= { chart: new ChartStore(dynamoDbClient(), ...) }`,
 * lib/exports/summary-export-wiring.ts line 12 `cached`): these module-level caches keep the SDK client of the
 * first stack. startLocalStack/close call resetClients(), which destroys that client and points new
 * ones at the new ports ("so the next call builds fresh clients", lib/aws/clients.ts), but the cached
 * objects keep using the destroyed client. After a restart every audited request answers 500 (the
 * audit append fails with a plain Error: "audit.append_failed", then "request.failed"), and the exports
 * read the old endpoint. Reproduce: start a stack, GET /exportHl7PatientAdt?patientId=demo-patient-1,
 * close it, start another, repeat the GET: 500. No effect in Lambda (clients are never reset), but any
 * test file or CLI that restarts the local stack in one process breaks. Fix: key the caches on the
 * client (as lib/results/result-wiring.ts `once` does) or clear them in resetClients. Fixed by rebuilding the
 * caches when the client changed.
 */
import type { LocalStack } from '../../lib/local/stack';
import { startTestStack } from '../support/local-stack';
import { jsonPost, labBody, quietLogs, send } from './support';

let stack: LocalStack | undefined;
let logs: ReturnType<typeof quietLogs>;

beforeAll(() => {
  logs = quietLogs();
});

afterAll(async () => {
  await stack?.close();
  logs.restore();
});

it('a restarted local stack serves exports, intake and the inbox (was a BUG: module caches kept the destroyed SDK client)', async () => {
  const first = await startTestStack();
  expect((await send({ method: 'GET', url: '/exportHl7PatientAdt?patientId=demo-patient-1', headers: { 'x-api-key': 'demo-export-key' } })).status).toBe(200);
  await first.close();
  stack = await startTestStack();
  const statuses = [
    (await send({ method: 'GET', url: '/exportHl7PatientAdt?patientId=demo-patient-1', headers: { 'x-api-key': 'demo-export-key' } })).status,
    (await send(jsonPost('/receiveTestData', 'demo-results-key', labBody()))).status,
    (await send({ method: 'GET', url: '/interopInbox', headers: { 'x-api-key': 'demo-inbox-key' } })).status,
  ];
  console.log(
    `local-stack-restart: ${statuses.filter((x) => x === 200).length} passed, ${statuses.filter((x) => x !== 200).length} failed (statuses after a restart ${statuses.join(', ')})`,
  );
  expect(statuses).toEqual([200, 200, 200]);
});
