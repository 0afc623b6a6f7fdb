/**
 * `npm run dlq` end to end against the local stack's SQS (fauxqs): a message put in a DLQ is
 * listed (count, age, no body), redriven to its source queue, and the DLQ is empty again. The
 * "stage" runs resolve the queues by name (`interop-test-*`: the test stack's prefix is stage test).
 */
import { ReceiveMessageCommand, SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import type { LocalStack } from '../local/stack';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/stack';
import { startTestStack } from '../../test/support/local-stack';
import { dlqCli } from './dlq-cli';
import { dlqLocalTarget, dlqStageTarget, queueIdOf, LOCAL_STACK_NOT_RUNNING, type DlqTarget } from './dlq-admin';

let stack: LocalStack;
let sqs: SQSClient;
beforeAll(async () => {
  stack = await startTestStack();
  sqs = new SQSClient({ region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS, endpoint: stack.urls.sqs });
}, 60_000);
afterAll(async () => {
  sqs?.destroy();
  await stack?.close();
});

const SECRET_BODY = JSON.stringify({ packetId: 'pkt_dlq_body_marker' });

async function run(argv: string[], resolveTarget: (stage: string | undefined) => DlqTarget = () => dlqLocalTarget()) {
  let out = '';
  let err = '';
  const code = await dlqCli(argv, { out: (t) => void (out += t), err: (t) => void (err += t) }, { resolveTarget });
  return { code, out, err };
}

async function drain(url: string): Promise<string[]> {
  const bodies: string[] = [];
  for (;;) {
    const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, WaitTimeSeconds: 0 }));
    if (!r.Messages?.length) return bodies;
    bodies.push(...r.Messages.map((m) => m.Body!));
  }
}

test('list shows 1, redrive moves it (body and attributes intact), list shows 0; a second redrive moves nothing', async () => {
  const { url, dlqUrl } = stack.queues.matching;
  await sqs.send(
    new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: SECRET_BODY, MessageAttributes: { kind: { DataType: 'String', StringValue: 'form' } } }),
  );

  const before = await run(['list']);
  expect(before.code).toBe(0);
  expect(before.out).toMatch(/^matching\s+interop-test-form-matching-dlq\s+1\s+0\s+\d+s$/m);
  expect(before.out).toMatch(/^notifications\s+interop-test-result-notifications-dlq\s+0\s+0\s+-$/m);
  expect(before.out + before.err).not.toContain('pkt_dlq_body_marker');

  const json = await run(['list', '--json']);
  expect(JSON.parse(json.out).find((s: { queue: string }) => s.queue === 'matching')).toMatchObject({ messages: 1, dlqName: 'interop-test-form-matching-dlq' });
  expect(json.out).not.toContain('pkt_dlq_body_marker');

  const moved = await run(['redrive', 'matching']);
  expect(moved).toMatchObject({ code: 0, out: 'moved 1 message(s) from interop-test-form-matching-dlq to interop-test-form-matching\n' });

  const after = await run(['list']);
  expect(after.out).toMatch(/^matching\s+\S+\s+0\s+0\s+-$/m);
  expect(await run(['redrive', 'form-matching'])).toMatchObject({ code: 0, out: expect.stringContaining('moved 0 message(s)') });

  const r = await sqs.send(new ReceiveMessageCommand({ QueueUrl: url, MaxNumberOfMessages: 10, MessageAttributeNames: ['All'] }));
  expect(r.Messages?.map((m) => [m.Body, m.MessageAttributes?.kind?.StringValue])).toEqual([[SECRET_BODY, 'form']]);
  await drain(url);
}, 60_000);

test('redrive --max moves at most N, in batches of 10; a stage target finds the queues by name', async () => {
  const { url, dlqUrl } = stack.queues.notifications;
  for (let i = 0; i < 13; i++) await sqs.send(new SendMessageCommand({ QueueUrl: dlqUrl, MessageBody: `n${i}` }));
  const stage = () => dlqStageTarget('test', sqs);
  const some = await run(['redrive', 'notifications', '--max', '11', '--stage', 'test'], stage);
  expect(some).toMatchObject({ code: 0, out: 'moved 11 message(s) from interop-test-result-notifications-dlq to interop-test-result-notifications\n' });
  const rest = await run(['redrive', 'notifications', '--stage', 'test'], stage);
  expect(rest.out).toContain('moved 2 message(s)');
  expect((await drain(url)).sort()).toEqual(Array.from({ length: 13 }, (_, i) => `n${i}`).sort());
  expect(await drain(dlqUrl)).toEqual([]);
}, 60_000);

test('--help exits 0, usage errors exit 2, a missing stage queue or no local stack is one line and exit 1', async () => {
  expect((await run(['--help'])).code).toBe(0);
  expect((await run(['redrive', '--help'])).code).toBe(0);
  expect(await run([])).toMatchObject({ code: 2 });
  expect(await run(['redrive'])).toMatchObject({ code: 2, err: expect.stringContaining('exactly one queue') });
  expect(await run(['redrive', 'nope'])).toMatchObject({ code: 2, err: expect.stringContaining('unknown queue "nope"') });
  expect(await run(['redrive', 'matching', '--max', '0'])).toMatchObject({ code: 2 });
  expect(await run(['list', '--bogus'])).toMatchObject({ code: 2 });

  const missing = await run(['list', '--stage', 'nostage'], () => dlqStageTarget('nostage', sqs));
  expect(missing.code).toBe(1);
  expect(missing.err.trim().split('\n')).toEqual([
    expect.stringMatching(/^stage nostage.*: queue interop-nostage-form-matching does not exist \(deploy the stack first, or check --stage and AWS_REGION\)$/),
  ]);

  const noStack = await run(['list'], () =>
    dlqLocalTarget(() => {
      throw new Error('no endpoints file');
    }),
  );
  expect(noStack).toMatchObject({ code: 1, err: `${LOCAL_STACK_NOT_RUNNING}\n` });
});

test('queue names: id, base name, full name or DLQ name', () => {
  expect(['matching', 'form-matching', 'interop-prod-form-matching', 'interop-prod-form-matching-dlq'].map(queueIdOf)).toEqual(Array(4).fill('matching'));
  expect(queueIdOf('webhook-deliveries')).toBe('webhookDeliveries');
  expect(queueIdOf('other')).toBeUndefined();
});
