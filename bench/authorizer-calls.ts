/**
 * Issue 31, item 1, measured alone: DynamoDB calls the authorizer makes per request, traced with the
 * bench's SDK middleware (bench/aws-calls.ts) on the local stack, for a warm container (after a
 * warm-up) and for the first request of a new container, with the record bound at its default
 * (10 s) and at 0 (read key and partner on every request, as before issue 31).
 *
 *   npx tsx bench/authorizer-calls.ts      (prints a table; writes bench/authorizer-calls.json)
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient, kmsClient, s3Client, sqsClient } from '../lib/aws/clients';
import { ApiKeyStore } from '../lib/keys/api-key-store';
import { ACCESS_RECORD_MAX_AGE_ENV } from '../lib/keys/access-wiring';
import { startTestStack } from '../test/support/local-stack';
import { CallRecorder } from './aws-calls';
import { simulateNewContainer, traceOne } from './call-paths';
import { createBenchKeys } from './fixtures';
import { invoke } from './invoke';
import { scenarioFor } from './scenarios';

const ENDPOINTS = ['exportHl7Note', 'receiveTestData', 'listInteropInbox', 'fhirPatientRead'];

export interface AuthorizerCalls {
  boundSeconds: number;
  endpoint: string;
  warmRequests: number;
  /** DynamoDB calls of the authorizer per traced warm request */
  warm: number[];
  /** the authorizer's DynamoDB operations on the first request of a new container */
  firstOfContainer: string[];
}

async function main() {
  const stack = await startTestStack({ prefix: 'interop-bench-authorizer', env: { LOG_LEVEL: 'warn' } });
  const adminDb = new DynamoDBClient({ endpoint: stack.urls.dynamodb });
  const out: AuthorizerCalls[] = [];
  try {
    await createBenchKeys(new ApiKeyStore(adminDb, stack.tables.keys), new Date());
    const recorder = new CallRecorder();
    recorder.attach({ dynamodb: dynamoDbClient(), kms: kmsClient(), sqs: sqsClient(), s3: s3Client() });
    for (const bound of [10, 0]) {
      process.env[ACCESS_RECORD_MAX_AGE_ENV] = String(bound);
      for (const name of ENDPOINTS) {
        const scenario = scenarioFor(name)!;
        simulateNewContainer(recorder);
        let n = 0;
        const first = await traceOne(recorder, scenario, scenario.request(n++), 'first of a container');
        const firstOps = first.traced.calls.filter((c) => c.phase === 'authorizer' && c.call.startsWith('dynamodb.')).map((c) => c.call);
        for (let i = 0; i < 100; i++) await invoke(scenario, scenario.request(n++), recorder);
        const warm: number[] = [];
        for (let i = 0; i < 20; i++) warm.push((await traceOne(recorder, scenario, scenario.request(n++), 'warm')).traced.byPhase.authorizer.dynamodb);
        out.push({ boundSeconds: bound, endpoint: name, warmRequests: 100, warm, firstOfContainer: firstOps });
      }
    }
  } finally {
    adminDb.destroy();
    await stack.close();
  }
  writeFileSync(path.join(__dirname, 'authorizer-calls.json'), JSON.stringify(out, null, 2) + '\n');
  console.log('| record bound | endpoint | authorizer DynamoDB calls, 20 warm requests (after 100) | first request of a new container |');
  console.log('| --- | --- | --- | --- |');
  for (const r of out)
    console.log(
      `| ${r.boundSeconds} s | ${r.endpoint} | max ${Math.max(...r.warm)}, mean ${(r.warm.reduce((s, x) => s + x, 0) / r.warm.length).toFixed(2)} | ${r.firstOfContainer.join(', ')} |`,
    );
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
