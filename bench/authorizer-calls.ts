/**
 * Issue 31, item 1, measured alone: DynamoDB calls the authorizer makes per request, traced with the
 * bench's SDK middleware (bench/aws-calls.ts) on the local stack, for a warm container (after a
 * warm-up) and for the first request of a new container, with the record bound at its default
 * (10 s) and at 0 (read key and partner on every request, as before issue 31).
 *
 *   npx tsx bench/authorizer-calls.ts      (prints a table; writes bench/authorizer-calls.json)
 * `npm run bench` runs measureAuthorizerCalls as well (row 31.1 of bench/RESULTS.md).
 */
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient, kmsClient, s3Client, sqsClient } from '../lib/aws/clients';
import { ApiKeyStore } from '../lib/keys/api-key-store';
import { ACCESS_RECORD_MAX_AGE_ENV } from '../lib/keys/access-wiring';
import { MAX_ACCESS_RECORD_AGE_SECONDS } from '../lib/keys/access-records';
import { startTestStack } from '../test/support/local-stack';
import { CallRecorder } from './aws-calls';
import { simulateNewContainer, traceOne } from './call-paths';
import { createBenchKeys } from './fixtures';
import { invoke } from './invoke';
import { scenarioFor } from './scenarios';

const ENDPOINTS = ['exportHl7Note', 'receiveTestData', 'listInteropInbox', 'fhirPatientRead'];
/** lib/keys/access-records.ts: the container keeps key and partner records at most this long by default */
const DEFAULT_BOUND_SECONDS = MAX_ACCESS_RECORD_AGE_SECONDS;

export interface AuthorizerCalls {
  boundSeconds: number;
  endpoint: string;
  warmRequests: number;
  /** DynamoDB calls of the authorizer per traced warm request */
  warm: number[];
  /** the authorizer's DynamoDB operations on the first request of a new container */
  firstOfContainer: string[];
}

export interface AuthorizerCallsResult {
  /** the container record bound in steady state (lib/keys/access-records.ts default) */
  defaultBoundSeconds: number;
  rows: AuthorizerCalls[];
  /** the most authorizer DynamoDB calls of any traced warm request at the default bound */
  warmMax: number;
  warmMean: number;
  tracedWarm: number;
}

/**
 * The measurement: its own local stack, for each bound (the default 10 s, then 0 = no record cache,
 * as before issue 31) and each endpoint, a new container's first request traced, `warmup` requests,
 * then `samples` traced warm requests. Uses the shared SDK clients (replaces them per container).
 */
export async function measureAuthorizerCalls(options: { warmup: number; samples: number; progress?: (line: string) => void }): Promise<AuthorizerCallsResult> {
  const previousBound = process.env[ACCESS_RECORD_MAX_AGE_ENV];
  const stack = await startTestStack({ prefix: 'interop-bench-authorizer', env: { LOG_LEVEL: 'warn' } });
  const adminDb = new DynamoDBClient({ endpoint: stack.urls.dynamodb });
  const rows: AuthorizerCalls[] = [];
  try {
    await createBenchKeys(new ApiKeyStore(adminDb, stack.tables.keys), new Date());
    const recorder = new CallRecorder();
    recorder.attach({ dynamodb: dynamoDbClient(), kms: kmsClient(), sqs: sqsClient(), s3: s3Client() });
    for (const bound of [DEFAULT_BOUND_SECONDS, 0]) {
      process.env[ACCESS_RECORD_MAX_AGE_ENV] = String(bound);
      for (const name of ENDPOINTS) {
        const scenario = scenarioFor(name)!;
        simulateNewContainer(recorder);
        let n = 0;
        const first = await traceOne(recorder, scenario, scenario.request(n++), 'first of a container');
        const firstOps = first.traced.calls.filter((c) => c.phase === 'authorizer' && c.call.startsWith('dynamodb.')).map((c) => c.call);
        for (let i = 0; i < options.warmup; i++) await invoke(scenario, scenario.request(n++), recorder);
        const warm: number[] = [];
        for (let i = 0; i < options.samples; i++)
          warm.push((await traceOne(recorder, scenario, scenario.request(n++), 'warm')).traced.byPhase.authorizer.dynamodb);
        rows.push({ boundSeconds: bound, endpoint: name, warmRequests: options.warmup, warm, firstOfContainer: firstOps });
        options.progress?.(`  bound ${bound} s, ${name}: warm max ${Math.max(...warm)}, first of a container ${firstOps.length}`);
      }
    }
  } finally {
    if (previousBound === undefined) delete process.env[ACCESS_RECORD_MAX_AGE_ENV];
    else process.env[ACCESS_RECORD_MAX_AGE_ENV] = previousBound;
    adminDb.destroy();
    await stack.close();
  }
  const warmAtDefault = rows.filter((r) => r.boundSeconds === DEFAULT_BOUND_SECONDS).flatMap((r) => r.warm);
  return {
    defaultBoundSeconds: DEFAULT_BOUND_SECONDS,
    rows,
    warmMax: Math.max(...warmAtDefault),
    warmMean: warmAtDefault.reduce((s, x) => s + x, 0) / Math.max(1, warmAtDefault.length),
    tracedWarm: warmAtDefault.length,
  };
}

export function renderAuthorizerCalls(result: AuthorizerCallsResult): string[] {
  const out = [
    '| record bound | endpoint | authorizer DynamoDB calls per traced warm request | first request of a new container |',
    '| --- | --- | --- | --- |',
  ];
  for (const r of result.rows)
    out.push(
      `| ${r.boundSeconds} s | ${r.endpoint} | max ${Math.max(...r.warm)}, mean ${(r.warm.reduce((s, x) => s + x, 0) / r.warm.length).toFixed(2)} (${r.warm.length} after ${r.warmRequests}) | ${r.firstOfContainer.map((c) => c.replace(/^dynamodb\./, '')).join(', ')} |`,
    );
  return out;
}

async function main() {
  const result = await measureAuthorizerCalls({ warmup: 100, samples: 20 });
  writeFileSync(path.join(__dirname, 'authorizer-calls.json'), JSON.stringify(result.rows, null, 2) + '\n');
  console.log(renderAuthorizerCalls(result).join('\n'));
}

if (require.main === module)
  main().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
