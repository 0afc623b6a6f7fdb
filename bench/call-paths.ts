/**
 * Measurement 3, the paths a steady-state run does not show: one traced request each.
 *   - authorizer: unknown key (the anonymous counter)
 *   - note export: note not found (404)
 *   - lab intake: first request ever (creates the lookup key), first request of a new container
 *     (lookup key read and unwrapped), x-request-id (idempotency), exact resend (duplicate),
 *     replay of an x-request-id
 *   - routeInboxPacket (each request consumes an inbox packet: traced, not timed)
 */
import { resetClients, dynamoDbClient, kmsClient, s3Client, sqsClient } from '../lib/aws/clients';
import { clearResultKeysCache } from '../lib/results/lookup-keys';
import { summarizeCalls, type CallRecorder, type PathCalls } from './aws-calls';
import type { RequestSpec } from './fixtures';
import { invoke, type Invocation } from './invoke';
import type { Scenario } from './scenarios';

export interface TracedPath extends PathCalls {
  body?: string;
}

export async function traceOne(
  recorder: CallRecorder,
  scenario: Scenario,
  spec: RequestSpec,
  path: string,
): Promise<{ traced: TracedPath; invocation: Invocation }> {
  recorder.tracing = true;
  try {
    const { value, calls } = await recorder.capture(() => invoke(scenario, spec, recorder));
    return { traced: summarizeCalls(scenario.endpoint.name, path, value.status, calls), invocation: value };
  } finally {
    recorder.endTracing();
  }
}

/** A fresh "container" for the lab intake: new SDK clients (so new data key caches) and no cached lookup key. */
export function simulateNewContainer(recorder: CallRecorder): void {
  clearResultKeysCache();
  resetClients();
  recorder.attach({ dynamodb: dynamoDbClient(), kms: kmsClient(), sqs: sqsClient(), s3: s3Client() });
}
