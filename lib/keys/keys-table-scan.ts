/**
 * Every item of some kinds in the keys table (`kind` attribute: key, partner, authority, sender,
 * formSource), page by page: a scan, for the operator CLI and the local stack only (the table is
 * small; no request path scans it).
 */
import { ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

export async function scanKeysTableKinds(db: DynamoDBClient, table: string, kinds: readonly string[]): Promise<Array<Record<string, AttributeValue>>> {
  const items: Array<Record<string, AttributeValue>> = [];
  const values = Object.fromEntries(kinds.map((kind, index) => [`:k${index}`, { S: kind }]));
  let start: Record<string, AttributeValue> | undefined;
  do {
    const out = await db.send(
      new ScanCommand({
        TableName: table,
        ExclusiveStartKey: start,
        FilterExpression: `#t IN (${Object.keys(values).join(', ')})`,
        ExpressionAttributeNames: { '#t': 'kind' },
        ExpressionAttributeValues: values,
      }),
    );
    items.push(...(out.Items ?? []));
    start = out.LastEvaluatedKey;
  } while (start);
  return items;
}
