import { GetItemCommand, PutItemCommand, ScanCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import type { ApiKeyRecord, PartnerRecord } from './api-key';

const keyPk = (hash: string) => `KEY#${hash}`;
const partnerPk = (partnerId: string) => `PARTNER#${partnerId}`;

/** API keys (by hash) and partners, in the keys table. */
export class ApiKeyStore {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  async getKey(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const out = await this.db.send(new GetItemCommand({ TableName: this.table, Key: marshall({ pk: keyPk(keyHash) }), ConsistentRead: true }));
    if (!out.Item) return undefined;
    const { pk: _pk, kind: _kind, ...record } = unmarshall(out.Item);
    return record as ApiKeyRecord;
  }

  async getPartner(partnerId: string): Promise<PartnerRecord | undefined> {
    const out = await this.db.send(new GetItemCommand({ TableName: this.table, Key: marshall({ pk: partnerPk(partnerId) }), ConsistentRead: true }));
    if (!out.Item) return undefined;
    const { pk: _pk, kind: _kind, ...record } = unmarshall(out.Item);
    return record as PartnerRecord;
  }

  /** Creates the key; never overwrites an existing one (returns false when it exists). */
  async putKey(record: ApiKeyRecord): Promise<boolean> {
    try {
      await this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: marshall({ pk: keyPk(record.keyHash), kind: 'key', ...record }, { removeUndefinedValues: true }),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      );
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }

  /** Writes the partner; with `ifMissing` an existing partner is left as it is (returns false). */
  async putPartner(record: PartnerRecord, options: { ifMissing?: boolean } = {}): Promise<boolean> {
    try {
      await this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: marshall({ pk: partnerPk(record.partnerId), kind: 'partner', ...record }, { removeUndefinedValues: true }),
          ...(options.ifMissing ? { ConditionExpression: 'attribute_not_exists(pk)' } : {}),
        }),
      );
      return true;
    } catch (error) {
      if (options.ifMissing && (error as Error).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }

  async revokeKey(keyHash: string, at: Date): Promise<boolean> {
    try {
      await this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk: keyPk(keyHash) }),
          UpdateExpression: 'SET #s = :revoked, revokedAt = :at',
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: { '#s': 'status' },
          ExpressionAttributeValues: marshall({ ':revoked': 'revoked', ':at': at.toISOString() }),
        }),
      );
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConditionalCheckFailedException') return false;
      throw error;
    }
  }

  /** Administrative listing (CLI only, never on a request path): the keys table is small. */
  async listKeys(): Promise<ApiKeyRecord[]> {
    const keys: ApiKeyRecord[] = [];
    let start: Record<string, import('@aws-sdk/client-dynamodb').AttributeValue> | undefined;
    do {
      const out = await this.db.send(
        new ScanCommand({ TableName: this.table, ExclusiveStartKey: start, FilterExpression: 'kind = :k', ExpressionAttributeValues: marshall({ ':k': 'key' }) }),
      );
      for (const item of out.Items ?? []) {
        const { pk: _pk, kind: _kind, ...record } = unmarshall(item);
        keys.push(record as ApiKeyRecord);
      }
      start = out.LastEvaluatedKey;
    } while (start);
    return keys.sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }
}
