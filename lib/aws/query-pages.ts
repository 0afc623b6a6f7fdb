/**
 * One DynamoDB Query read page after page, each page through `awsCall`: `onPage` gets a page's
 * items and answers whether to read on; the reading also stops when no page is left. `input` is
 * asked again for every page, so a `Limit` can shrink as results are collected.
 */
import { QueryCommand, type AttributeValue, type DynamoDBClient, type QueryCommandInput } from '@aws-sdk/client-dynamodb';
import { awsCall } from './dependency-calls';

export type ItemKey = Record<string, AttributeValue>;

export async function queryPages(
  db: DynamoDBClient,
  dependency: string,
  input: () => Omit<QueryCommandInput, 'ExclusiveStartKey'>,
  onPage: (items: Record<string, AttributeValue>[]) => boolean | Promise<boolean>,
  start?: ItemKey,
): Promise<void> {
  let next = start;
  do {
    const out = await awsCall(dependency, () => db.send(new QueryCommand({ ...input(), ExclusiveStartKey: next })));
    next = out.LastEvaluatedKey;
    if (!(await onPage(out.Items ?? []))) return;
  } while (next);
}
