/**
 * Test support: a DynamoDB client for a local endpoint that records the name of every command it
 * sends (a middleware that only looks; requests and answers are untouched). Never imported by
 * deployed code.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface CountingClient {
  db: DynamoDBClient;
  /** command names sent since the last reset, in order (e.g. ['GetItemCommand', 'UpdateItemCommand']) */
  calls: string[];
  /** the partition key (`pk`) each UpdateItem / PutItem named, in order */
  writtenKeys: string[];
  reset(): void;
}

export function countingDynamoDbClient(endpoint: string): CountingClient {
  const db = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' }, maxAttempts: 1 });
  const calls: string[] = [];
  const writtenKeys: string[] = [];
  db.middlewareStack.add(
    (next, context) => async (args) => {
      calls.push(String(context.commandName));
      const input = args.input as { Key?: { pk?: { S?: string } }; Item?: { pk?: { S?: string } } };
      const pk = input.Key?.pk?.S ?? input.Item?.pk?.S;
      if ((context.commandName === 'UpdateItemCommand' || context.commandName === 'PutItemCommand') && pk !== undefined) writtenKeys.push(pk);
      return next(args);
    },
    { step: 'initialize', name: 'countDynamoDbCalls' },
  );
  return {
    db,
    calls,
    writtenKeys,
    reset: () => {
      calls.splice(0);
      writtenKeys.splice(0);
    },
  };
}
