/**
 * Records the SDK calls of one function's cold invocation, for its cold-start floor
 * (bench/cold-start-floor.ts). One fresh process per function (a new container: no client, no
 * cache), the cold-start event and environment of bench/cold-start.ts (every endpoint a closed
 * port on 127.0.0.1, so no call is answered with data), the handler loaded from functions/<name>.ts
 * as the local stack loads it, and the shared clients of lib/aws/clients.ts traced by the
 * CallRecorder of bench/aws-calls.ts (the recording the warm I/O floor replays). It stops once
 * the first call has answered (here: failed to connect, after the SDK's retries): every call
 * started before that moment is the first burst; later calls are not needed.
 *
 *   node --import tsx bench/cold-start-record.ts <function> <event.json>
 *
 * Prints one line: BENCH_CALLS [{service, op, input, startNs, endNs}] (bytes as {$bytes: base64}).
 */
import { readFileSync } from 'node:fs';
import { dynamoDbClient, kmsClient, s3Client, sqsClient } from '../lib/aws/clients';
import { loadHandler } from '../lib/local/function-registry';
import { lambdaContext } from '../lib/local/lambda-context';
import { setLogSink } from '../lib/observability/logger';
import { CallRecorder } from './aws-calls';
import { encodeCalls } from './cold-start-floor';

async function main(name: string, eventFile: string): Promise<void> {
  setLogSink(() => undefined);
  const event = JSON.parse(readFileSync(eventFile, 'utf8')) as unknown;
  const recorder = new CallRecorder();
  recorder.attach({ dynamodb: dynamoDbClient(), kms: kmsClient(), sqs: sqsClient(), s3: s3Client() });
  recorder.tracing = true;
  const handler = await loadHandler(name);
  const firstAnswer = new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      if (recorder.trace.some((c) => c.endNs !== undefined)) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
    timer.unref();
  });
  const invocation = recorder
    .inPhase('handler', async () => handler(event, lambdaContext(name, 30), () => undefined))
    .then(
      () => undefined,
      () => undefined,
    );
  await Promise.race([firstAnswer, invocation]);
  process.stdout.write(`\nBENCH_CALLS ${encodeCalls(recorder.trace)}\n`);
  process.exit(0);
}

if (require.main === module) {
  const [name, eventFile] = process.argv.slice(2);
  main(name!, eventFile!).catch((error: unknown) => {
    process.stderr.write(`cold-start-record: ${(error as Error).message}\n`);
    process.exit(1);
  });
}
