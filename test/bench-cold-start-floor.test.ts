/**
 * The per-function cold-start floor (bench/cold-start-floor.ts): which recorded calls it sends,
 * which Command classes it imports, and the source it bundles.
 */
import { build } from 'esbuild';
import { LAMBDA_BUNDLE_OPTIONS } from '../scripts/build';
import type { CallRecord } from '../bench/aws-calls';
import { needsOf } from '../bench/cold-start';
import {
  callFloorId,
  callFloorSource,
  commandsInBundle,
  commandsOfNeeds,
  decodeCalls,
  describeBurst,
  encodeCalls,
  firstBurst,
  inputLiteral,
} from '../bench/cold-start-floor';

const call = (service: CallRecord['service'], op: string, input: Record<string, unknown>, startNs: number, endNs?: number): CallRecord => ({
  service,
  op,
  phase: 'handler',
  input,
  startNs: BigInt(startNs),
  ...(endNs === undefined ? {} : { endNs: BigInt(endNs) }),
});

const query = (shard: number) => ({
  TableName: 'interop-bench-forms',
  IndexName: 'byState',
  KeyConditionExpression: 'gsi1pk = :pk',
  ExpressionAttributeValues: { ':pk': { S: `STATE#pending_review#${shard}` } },
});
const put = { Bucket: 'interop-bench-documents', Key: 'doc/1', Body: new Uint8Array([1, 2, 3]) };

// a function recorded sending 3 Queries and 1 PutObject together, then (after an answer) a PutItem
const recorded = [
  call('dynamodb', 'Query', query(0), 10, 50),
  call('dynamodb', 'Query', query(1), 11, 52),
  call('dynamodb', 'Query', query(2), 12, 53),
  call('s3', 'PutObject', put, 13, 60),
  call('dynamodb', 'PutItem', { TableName: 'interop-bench-audit', Item: { pk: { S: 'A' } } }, 55, 70),
];

describe('cold-start floor: the first burst', () => {
  it('is every call started before the first answer, in order; later calls (which may depend on an answer) are left out', () => {
    const burst = firstBurst(recorded);
    expect(burst.map((c) => `${c.service}.${c.op}`)).toEqual(['dynamodb.Query', 'dynamodb.Query', 'dynamodb.Query', 's3.PutObject']);
    expect(burst[1]!.input).toEqual(query(1));
    expect(describeBurst(burst)).toBe('3×Query(forms) + PutObject');
  });

  it('a call whose answer came back before the next started makes a burst of one', () => {
    const sequential = [call('dynamodb', 'GetItem', { TableName: 'interop-bench-chart' }, 1, 5), call('dynamodb', 'Query', query(0), 6, 9)];
    expect(firstBurst(sequential).map((c) => c.op)).toEqual(['GetItem']);
    expect(firstBurst([])).toEqual([]);
  });

  it('recordings survive the child process line (bytes and bigint times)', () => {
    const back = decodeCalls(encodeCalls(recorded));
    expect(back.map((c) => [c.op, c.startNs, c.endNs])).toEqual(recorded.map((c) => [c.op, c.startNs, c.endNs]));
    expect(back[3]!.input.Body).toEqual(new Uint8Array([1, 2, 3]));
    expect(firstBurst(back)).toEqual(firstBurst(recorded));
  });
});

describe('cold-start floor: the Command classes of a bundle', () => {
  it('are the @aws-sdk/client-* command modules with bytes in the output', () => {
    expect(
      commandsInBundle({
        'node_modules/@aws-sdk/client-dynamodb/dist-es/commands/QueryCommand.js': { bytesInOutput: 900 },
        'node_modules/@aws-sdk/client-dynamodb/dist-es/commands/ScanCommand.js': { bytesInOutput: 0 },
        'node_modules/@aws-sdk/client-s3/dist-es/commands/PutObjectCommand.js': { bytesInOutput: 1200 },
        'node_modules/@aws-sdk/client-api-gateway/dist-es/commands/DeleteApiKeyCommand.js': { bytesInOutput: 300 },
        'node_modules/@aws-sdk/client-s3/dist-es/S3Client.js': { bytesInOutput: 5000 },
        'lib/aws/clients.ts': { bytesInOutput: 800 },
      }),
    ).toEqual(['apigateway:DeleteApiKeyCommand', 'dynamodb:QueryCommand', 's3:PutObjectCommand']);
  });
});

describe('cold-start floor: the Command classes a function may send (its needs)', () => {
  it('are those of the operations its needs list; a bundled command it never sends is not floor', () => {
    expect(
      [
        ...commandsOfNeeds({
          tables: { forms: ['Query:byStateSummary', 'Query:byState'], audit: ['PutItem'] },
          kms: ['Decrypt'],
          queues: { matching: 'send', notifications: 'consume' },
          documentsBucket: 'read',
          apiGatewayKeys: 'delete',
        }),
      ].sort(),
    ).toEqual([
      'apigateway:DeleteApiKeyCommand',
      'apigateway:GetApiKeysCommand',
      'dynamodb:PutItemCommand',
      'dynamodb:QueryCommand',
      'kms:DecryptCommand',
      's3:GetObjectCommand',
      'sqs:SendMessageBatchCommand',
      'sqs:SendMessageCommand',
    ]);
    // the inbox listing bundles PacketReader whole (GetItem) but only queries: GetItem is its excess
    const listing = needsOf('listInteropInbox');
    expect(commandsOfNeeds(listing).has('dynamodb:GetItemCommand')).toBe(false);
    expect(commandsOfNeeds(listing).has('dynamodb:QueryCommand')).toBe(true);
    expect([...commandsOfNeeds({ documentsBucket: 'readwrite' })].sort()).toEqual(['s3:GetObjectCommand', 's3:PutObjectCommand']);
  });
});

describe('cold-start floor: the source', () => {
  const spec = {
    clients: ['dynamodb', 's3'] as const,
    commands: ['dynamodb:GetItemCommand', 'dynamodb:QueryCommand', 's3:PutObjectCommand'],
    burst: firstBurst(recorded),
  };

  it('imports the clients and the function bundle’s Command classes, and sends the burst the same way (the same commands and inputs, all at once)', () => {
    const source = callFloorSource({ ...spec, clients: [...spec.clients] });
    expect(source).toContain(
      "import { DynamoDBClient, GetItemCommand as dynamodb_GetItemCommand, QueryCommand as dynamodb_QueryCommand } from '@aws-sdk/client-dynamodb';",
    );
    expect(source).toContain("import { S3Client, PutObjectCommand as s3_PutObjectCommand } from '@aws-sdk/client-s3';");
    expect(source).toContain('export const commandClasses = [dynamodb_GetItemCommand, dynamodb_QueryCommand, s3_PutObjectCommand];');
    const sends = source.split('\n').filter((l) => l.includes('.send('));
    expect(sends).toHaveLength(4);
    expect(sends.slice(0, 3).every((l) => l.includes('built.dynamodb.send(new dynamodb_QueryCommand('))).toBe(true);
    expect(sends[2]).toContain('STATE#pending_review#2');
    expect(sends[3]).toContain(
      'built.s3.send(new s3_PutObjectCommand({"Bucket":"interop-bench-documents","Key":"doc/1","Body":new Uint8Array(Buffer.from("AQID", \'base64\'))}))',
    );
    // concurrently: one Promise.all around the four sends, nothing awaited in between
    expect(source).toMatch(/await Promise\.all\(\[\n(\s+built\.\w+\.send\(.*\),\n){4}\s+\]\);/);
    expect(source).not.toContain('PutItem'); // the call after the first answer is not the floor's
  });

  it('bundles (esbuild, the Lambda options) with exactly those Command classes in it', async () => {
    const result = await build({
      ...LAMBDA_BUNDLE_OPTIONS,
      sourcemap: false,
      stdin: { contents: callFloorSource({ ...spec, clients: [...spec.clients] }), loader: 'ts', resolveDir: process.cwd() },
      outfile: 'floor.mjs',
      write: false,
      metafile: true,
      logLevel: 'silent',
    });
    const output = Object.values(result.metafile.outputs)[0]!;
    // plus the commands the clients bundle themselves (endpoint discovery, S3 Express sessions)
    expect(commandsInBundle(output.inputs)).toEqual([...spec.commands, 'dynamodb:DescribeEndpointsCommand', 's3:CreateSessionCommand'].sort());
  });

  it('refuses a burst the function could not send: a command it does not bundle, a client outside its clients', () => {
    expect(() => callFloorSource({ clients: ['dynamodb', 's3'], commands: ['dynamodb:QueryCommand'], burst: firstBurst(recorded) })).toThrow(
      /PutObjectCommand/,
    );
    expect(() => callFloorSource({ ...spec, clients: ['dynamodb'] })).toThrow(/s3/);
  });

  it('functions with the same clients, commands and burst share a floor; any difference makes another', () => {
    const a = callFloorId({ ...spec, clients: [...spec.clients] });
    expect(callFloorId({ ...spec, clients: [...spec.clients] })).toBe(a);
    expect(a).toMatch(/^dynamodb\+s3 3×Query\(forms\) \+ PutObject #[0-9a-f]{8}$/);
    expect(callFloorId({ ...spec, clients: [...spec.clients], burst: spec.burst.slice(1) })).not.toBe(a);
  });

  it('input literals keep bytes as bytes', () => {
    const literal = inputLiteral({ Key: { pk: { B: new Uint8Array([255]) } } });
    expect(literal).toBe('{"Key":{"pk":{"B":new Uint8Array(Buffer.from("/w==", \'base64\'))}}}');
    expect(new Function(`return ${literal}`)()).toEqual({ Key: { pk: { B: new Uint8Array([255]) } } });
  });
});
