import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';
let stack: LocalStack;
beforeAll(async () => { stack = await startTestStack(); });
afterAll(async () => { await stack?.close(); });
it('smoke', async () => {
  const body = { data: { senderID: 'demo-lab', patientID: 'demo-patient-1', accessionNumber: 'ACC-1', status: 'F', ResultedDateUTC: '2024-03-01T09:30:00Z', results: { testName: 'Glucose', result: '98', units: 'mg/dL' } } };
  const t0 = Date.now();
  const res = await call(stack, 'POST', '/receiveTestData', { headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' }, body: JSON.stringify(body) });
  console.log(Date.now() - t0, res.status, res.text, [...res.headers.entries()]);
  const res2 = await call(stack, 'POST', '/receiveTestData', { headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' }, body: JSON.stringify({data: {status: 'bogus', ResultedDateUTC: '2024-02-30T00:00:00Z', results: [{}], reports: [{source: 'base64', data: 'abc'}]}}) });
  console.log(res2.status, res2.text);
});
