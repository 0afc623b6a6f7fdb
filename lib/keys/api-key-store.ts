import { GetItemCommand, PutItemCommand, UpdateItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import type { ApiKeyRecord, KeyStatus, PartnerPolicy, PartnerRecord } from './api-key';
import { AuthorityOwnerReader } from './authority-owner-reader';
import { scanKeysTableKinds } from './keys-table-scan';

const keyPk = (hash: string) => `KEY#${hash}`;
const partnerPk = (partnerId: string) => `PARTNER#${partnerId}`;

/** A claim attempt: `claimed` (`created`: the claim item is new) or refused because `owner` holds it. */

/** Partner fields `partners update` may change (undefined: keep; '' for the receiving fields and time zone, {} for the HL7 profile: remove). */
export type PartnerUpdate = Partial<
  Pick<
    PartnerRecord,
    | 'name'
    | 'tier'
    | 'allowedSenderIds'
    | 'allowedFormSourceIds'
    | 'assigningAuthorities'
    | 'receivingApplication'
    | 'receivingFacility'
    | 'rateLimit'
    | 'rateWindowSeconds'
    | 'timeZone'
    | 'patientAccess'
    | 'hl7Profile'
  >
>;

/**
 * Item attribute `kind` is the item type (`key` | `partner`); the partner's own kind
 * (external/internal) is stored as `partnerKind` and read back as `PartnerRecord.kind`.
 */
function partnerItem(record: PartnerRecord): Record<string, AttributeValue> {
  const { kind, ...rest } = record;
  return marshall({ pk: partnerPk(record.partnerId), kind: 'partner', ...rest, partnerKind: kind }, { removeUndefinedValues: true });
}

function partnerFromItem(item: Record<string, AttributeValue>): PartnerRecord {
  const { pk: _pk, kind: _type, partnerKind, ...record } = unmarshall(item);
  return { ...(record as PartnerRecord), ...(partnerKind ? { kind: partnerKind as PartnerRecord['kind'] } : {}) };
}

function keyFromItem(item: Record<string, AttributeValue>): ApiKeyRecord {
  const { pk: _pk, kind: _type, ...record } = unmarshall(item);
  return record as ApiKeyRecord;
}

const conditionFailed = (error: unknown) => (error as Error).name === 'ConditionalCheckFailedException';

/** API keys (by hash) and partners, in the keys table. */
export class ApiKeyStore {
  constructor(
    /** the keys table's client and name (lib/keys/identity-claims.ts writes its claim items beside) */
    readonly db: DynamoDBClient,
    readonly table: string,
  ) {}

  async getKey(keyHash: string): Promise<ApiKeyRecord | undefined> {
    const out = await this.db.send(new GetItemCommand({ TableName: this.table, Key: marshall({ pk: keyPk(keyHash) }), ConsistentRead: true }));
    return out.Item ? keyFromItem(out.Item) : undefined;
  }

  async getPartner(partnerId: string): Promise<PartnerRecord | undefined> {
    const out = await this.db.send(new GetItemCommand({ TableName: this.table, Key: marshall({ pk: partnerPk(partnerId) }), ConsistentRead: true }));
    return out.Item ? partnerFromItem(out.Item) : undefined;
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
      if (conditionFailed(error)) return false;
      throw error;
    }
  }

  /** Writes the partner; with `ifMissing` an existing partner is left as it is (returns false). */
  async putPartner(record: PartnerRecord, options: { ifMissing?: boolean } = {}): Promise<boolean> {
    try {
      await this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: partnerItem(record),
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

  /**
   * Sets the given fields of an existing partner and nothing else (its policy, kind and id stay);
   * an empty receiving application/facility or time zone, or an empty HL7 profile, removes it. False
   * when the partner does not exist.
   */
  async updatePartner(partnerId: string, fields: PartnerUpdate): Promise<boolean> {
    const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
    if (!entries.length) throw new TypeError('nothing to update');
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    const set: string[] = [];
    const remove: string[] = [];
    entries.forEach(([name, value], i) => {
      names[`#f${i}`] = name;
      if (value === '' || (name === 'hl7Profile' && Object.keys(value as object).length === 0)) remove.push(`#f${i}`);
      else {
        values[`:v${i}`] = value;
        set.push(`#f${i} = :v${i}`);
      }
    });
    try {
      await this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk: partnerPk(partnerId) }),
          UpdateExpression: [set.length ? `SET ${set.join(', ')}` : '', remove.length ? `REMOVE ${remove.join(', ')}` : ''].filter(Boolean).join(' '),
          ConditionExpression: 'attribute_exists(pk)',
          ExpressionAttributeNames: names,
          ...(set.length ? { ExpressionAttributeValues: marshall(values) } : {}),
        }),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw error;
    }
  }

  /**
   * The partner that owns an assigning authority (HL7 CX-4), or undefined when none does. One
   * consistent GetItem; the authority is normalised (trimmed, upper case) first.
   */
  authorityOwner(authority: string): Promise<string | undefined> {
    return new AuthorityOwnerReader(this.db, this.table).authorityOwner(authority);
  }

  /** Sets a partner's policy; false when the partner does not exist. */
  async setPartnerPolicy(partnerId: string, policy: PartnerPolicy): Promise<boolean> {
    return this.update(partnerPk(partnerId), { policy });
  }

  /**
   * Sets fields of an existing key (`expected`: only if its status is that one); false when the
   * key does not exist or the status differs. The hash, id, partner and scopes never change.
   */
  async updateKey(
    keyHash: string,
    fields: Partial<Pick<ApiKeyRecord, 'status' | 'gatewayKeyId' | 'expiresAt' | 'replacedBy' | 'revokedAt' | 'step' | 'tier' | 'gatewayKeyDeletedAt'>>,
    expected?: KeyStatus,
  ): Promise<boolean> {
    return this.update(keyPk(keyHash), fields, expected);
  }

  private async update(pk: string, fields: Record<string, unknown>, expectedStatus?: string): Promise<boolean> {
    const entries = Object.entries(fields).filter(([, v]) => v !== undefined);
    if (!entries.length) throw new TypeError('nothing to update');
    const names: Record<string, string> = {};
    const values: Record<string, unknown> = {};
    entries.forEach(([name, value], i) => {
      names[`#f${i}`] = name;
      values[`:v${i}`] = value;
    });
    let condition = 'attribute_exists(pk)';
    if (expectedStatus) {
      names['#expected'] = 'status';
      values[':expected'] = expectedStatus;
      condition += ' AND #expected = :expected';
    }
    try {
      await this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk }),
          UpdateExpression: `SET ${entries.map((_e, i) => `#f${i} = :v${i}`).join(', ')}`,
          ConditionExpression: condition,
          ExpressionAttributeNames: names,
          ExpressionAttributeValues: marshall(values),
        }),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw error;
    }
  }

  /** Administrative listing (CLI only, never on a request path): the keys table is small. */
  async listKeys(): Promise<ApiKeyRecord[]> {
    const keys = (await this.scan('key')).map(keyFromItem);
    return keys.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.keyId.localeCompare(b.keyId));
  }

  /** Administrative listing (CLI only). */
  async listPartners(): Promise<PartnerRecord[]> {
    return (await this.scan('partner')).map(partnerFromItem).sort((a, b) => a.partnerId.localeCompare(b.partnerId));
  }

  /** A key by its public id (CLI only: a scan; the table is small). */
  async findKeyById(keyId: string): Promise<ApiKeyRecord | undefined> {
    return (await this.listKeys()).find((k) => k.keyId === keyId);
  }

  private scan(kind: 'key' | 'partner'): Promise<Array<Record<string, AttributeValue>>> {
    return scanKeysTableKinds(this.db, this.table, [kind]);
  }
}
