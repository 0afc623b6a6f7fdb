/**
 * The scale bench's replay of a page's DynamoDB calls (bench/page-replay.ts) against the local
 * stack's DynamoDB, and the per-page figures bench/scale.ts gates on.
 */
import { DynamoDBClient, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { LocalStack } from '../lib/local/stack';
import { replayCalls, type PageCall } from '../bench/page-replay';
import { replayFigures } from '../bench/scale';
import { startTestStack } from './support/local-stack';

describe('bench scale: replaying a page', () => {
  let stack: LocalStack;
  let client: DynamoDBClient;
  const sent: Array<{ command: string; pk: string; startNs: bigint; endNs?: bigint; error?: string }> = [];

  beforeAll(async () => {
    stack = await startTestStack({ prefix: 'interop-replay-test', env: { LOG_LEVEL: 'error' } });
    client = new DynamoDBClient({ endpoint: stack.urls.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const input = args.input as {
          Key?: { pk?: { S?: string } };
          Item?: { pk?: { S?: string } };
          ExpressionAttributeValues?: Record<string, { S?: string }>;
        };
        const pk = input.Key?.pk?.S ?? input.Item?.pk?.S ?? input.ExpressionAttributeValues?.[':pk']?.S ?? '';
        const record: (typeof sent)[number] = { command: String(context.commandName), pk, startNs: process.hrtime.bigint() };
        sent.push(record);
        try {
          return await next(args);
        } catch (error) {
          record.error = (error as Error).name;
          throw error;
        } finally {
          record.endNs = process.hrtime.bigint();
        }
      },
      { step: 'initialize', name: 'replayTestRecorder' },
    );
    for (const pk of ['REPLAY#a', 'REPLAY#b', 'REPLAY#c'])
      await client.send(new PutItemCommand({ TableName: stack.tables.chart, Item: { pk: { S: pk }, sk: { S: 'X' } } }));
  });

  afterAll(async () => {
    client.destroy();
    await stack.close();
  });

  const at = (start: number, end: number) => ({ startNs: BigInt(start), endNs: BigInt(end) });

  it('sends the same commands with the same inputs in order, concurrent where the page was, sequential where it was not; a failing call does not stop it', async () => {
    const get = (pk: string) => ({ TableName: stack.tables.chart, Key: { pk: { S: pk }, sk: { S: 'X' } } });
    const page: PageCall[] = [
      // two GetItems that overlapped on the page
      { command: 'GetItemCommand', input: get('REPLAY#a'), ...at(0, 10) },
      { command: 'GetItemCommand', input: get('REPLAY#b'), ...at(1, 11) },
      // then a Query after both had answered
      {
        command: 'QueryCommand',
        input: { TableName: stack.tables.chart, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: 'REPLAY#c' } } },
        ...at(20, 30),
      },
      // then a conditional write whose condition fails (the item exists): still one round trip
      {
        command: 'PutItemCommand',
        input: { TableName: stack.tables.chart, Item: { pk: { S: 'REPLAY#a' }, sk: { S: 'X' } }, ConditionExpression: 'attribute_not_exists(pk)' },
        ...at(31, 40),
      },
    ];
    sent.length = 0;
    const ms = await replayCalls(client, page);
    expect(ms).toBeGreaterThan(0);
    expect(sent.map((s) => `${s.command} ${s.pk}`)).toEqual([
      'GetItemCommand REPLAY#a',
      'GetItemCommand REPLAY#b',
      'QueryCommand REPLAY#c',
      'PutItemCommand REPLAY#a',
    ]);
    const [a, b, q, w] = sent as [(typeof sent)[0], (typeof sent)[0], (typeof sent)[0], (typeof sent)[0]];
    expect(b.startNs < a.endNs!).toBe(true); // the two GetItems together
    expect(q.startNs >= a.endNs! && q.startNs >= b.endNs!).toBe(true); // the Query after both
    expect(w.startNs >= q.endNs!).toBe(true);
    expect(w.error).toBe('ConditionalCheckFailedException');
    // the inputs are copies: replaying twice sends the same again
    sent.length = 0;
    await replayCalls(client, page);
    expect(sent).toHaveLength(4);
    expect(page[0]!.input).toEqual(get('REPLAY#a'));
  });

  it('refuses a command the DynamoDB client does not have', async () => {
    await expect(replayCalls(client, [{ command: 'NoSuchCommand', input: {}, ...at(0, 1) }])).rejects.toThrow(/NoSuchCommand/);
  });
});

describe('bench scale: per-page figures over the replay', () => {
  it('the fastest page over the fastest replay (gated), and medians of page / replay and page - replay, paired page by page', () => {
    expect(replayFigures({ ms: [50, 40, 90], replayMs: [40, 32, 30] })).toEqual({
      replayMsMedian: 32,
      replayMsBest: 30,
      bestOverBestReplay: 40 / 30,
      overReplay: 1.25,
      ownMsMedian: 10,
    });
  });

  it('needs one replay per page', () => {
    expect(() => replayFigures({ ms: [50, 40], replayMs: [40] })).toThrow(/one replay per page/);
    expect(() => replayFigures({ ms: [], replayMs: [] })).toThrow(/one replay per page/);
  });
});
