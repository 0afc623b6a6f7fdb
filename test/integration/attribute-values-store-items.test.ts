/**
 * lib/aws/attribute-values.ts against @aws-sdk/util-dynamodb over the items the stores really
 * write: the local stack with its demo data (chart, keys, partners, webhooks), a lab result, a
 * form packet and a refused request through the API (results, notifications, packets,
 * indexes, audit), then every item of every table read back with a real Scan and compared.
 */
import { randomUUID } from 'node:crypto';
import { ScanCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { marshall as sdkMarshall, unmarshall as sdkUnmarshall } from '@aws-sdk/util-dynamodb';
import { dynamoDbClient } from '../../lib/aws/clients';
import { marshall, unmarshall } from '../../lib/aws/attribute-values';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';

jest.setTimeout(120_000);
let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

async function scanAll(table: string): Promise<Array<Record<string, AttributeValue>>> {
  const items: Array<Record<string, AttributeValue>> = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await dynamoDbClient().send(new ScanCommand({ TableName: table, ExclusiveStartKey: start }));
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start);
  return items;
}

/** Attribute types present anywhere in the item (S, N, M, ...), to show what the corpus covers. */
function attributeTypes(value: AttributeValue, into: Set<string>): void {
  for (const [type, inner] of Object.entries(value)) {
    if (inner === undefined) continue;
    into.add(type);
    if (type === 'M') for (const v of Object.values(inner as Record<string, AttributeValue>)) attributeTypes(v, into);
    if (type === 'L') for (const v of inner as AttributeValue[]) attributeTypes(v, into);
  }
}

describe('the items the stores write: our codec reads and writes them as @aws-sdk/util-dynamodb does', () => {
  it('every item of every table, after demo data, a lab result, a form packet and a refused request', async () => {
    const lab = await call(stack, 'POST', '/receiveTestData', {
      headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        data: {
          senderID: 'demo-lab',
          status: 'final',
          ResultedDateUTC: '2024-03-01T09:30:00Z',
          accessionNumber: `ACC-${randomUUID()}`,
          patientID: 'demo-patient-1',
          results: [
            { testName: 'Glucose', result: '98', units: 'mg/dL', referenceRange: '70-99' },
            { testName: 'Kommentar Ødegård 🧪', result: 'see note\nline two' },
          ],
        },
      }),
    });
    expect(lab.status).toBeLessThan(300);
    const packet = await call(stack, 'POST', '/receiveFormIntakeScope', {
      headers: { 'x-api-key': 'demo-forms-key', 'content-type': 'application/json' },
      body: JSON.stringify({
        payload: {
          sourceSystemId: 'demo-form-tool',
          formId: 'intake',
          submissionId: `s-${randomUUID()}`,
          patient: { firstName: 'Zoë', lastName: 'Ødegård', dob: '1990-02-03' },
          answers: { q: 'a', empty: '' },
        },
      }),
    });
    expect(packet.status).toBe(202);
    // a refused request: an audit record of a failure
    expect((await call(stack, 'GET', '/exportHl7Note?noteId=none', { headers: { 'x-api-key': 'demo-export-key' } })).status).toBeGreaterThanOrEqual(400);

    const types = new Set<string>();
    let items = 0;
    const tables = Object.values(stack.tables);
    for (const table of tables) {
      for (const item of await scanAll(table)) {
        items++;
        for (const value of Object.values(item)) attributeTypes(value, types);
        const native = sdkUnmarshall(item);
        expect(unmarshall(item)).toEqual(native);
        expect(marshall(native)).toEqual(sdkMarshall(native));
        expect(marshall(unmarshall(item))).toEqual(item);
      }
    }
    expect(tables.length).toBeGreaterThanOrEqual(5);
    expect(items).toBeGreaterThan(50);
    // the stores write strings, numbers, booleans, binary (summaries), lists and maps
    expect([...types].sort()).toEqual(expect.arrayContaining(['B', 'BOOL', 'L', 'M', 'N', 'S']));
  });
});
