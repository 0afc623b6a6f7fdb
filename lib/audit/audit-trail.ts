/**
 * The audit trail: one append-only record per PHI access or change (export served, result
 * stored, packet routed, inbox read), with who (partner, key), what (resource ids), when, the
 * request id and the outcome. No PHI: ids only (patient ids are the service's internal opaque
 * identifiers, never MRNs or names). Records are only ever added: PutItem with a condition that
 * the item does not exist; the functions' IAM grants PutItem and nothing else on the table.
 */
import { PutItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { createHash, randomBytes } from 'node:crypto';
import { ascending, mergeSortedPartitions, partitionsOf, shardedKeyFor } from '../dynamo/write-shards';

export type AuditOutcome = 'success' | 'not_found' | 'refused' | 'invalid' | 'conflict' | 'failed';

export interface AuditEvent {
  /** e.g. export.note, results.store, forms.route, inbox.read */
  action: string;
  /** the patient the record concerns, when one is known */
  patientId?: string;
  /** other resource ids: noteId, resultId, packetId ... (ids only) */
  resourceIds?: Record<string, string>;
  /**
   * further patients whose chart data the request showed (e.g. a packet's candidates): on success
   * each gets a record of its own, so the patient's audit trail shows who saw their chart
   */
  relatedPatientIds?: string[];
}

/** One changed setting of a partner or key: its value before and after (never PHI). */
export interface AuditChange {
  field: string;
  before: string;
  after: string;
}

export interface AuditRecord extends AuditEvent {
  at: string;
  requestId: string;
  partnerId: string;
  keyId: string;
  /** the signed-in staff member (user pool subject and sign-in name) when a person, not a key, acted */
  staffSubject?: string;
  staffUsername?: string;
  /** an operator CLI or scheduled job that changed a partner or key (lib/admin/admin-audit.ts): who ran it */
  operator?: string;
  /** what an operator change did, field by field (non-PHI settings only) */
  changes?: AuditChange[];
  outcome: AuditOutcome;
  status: number;
}

export function outcomeForStatus(status: number): AuditOutcome {
  if (status < 300) return 'success';
  if (status === 404) return 'not_found';
  if (status === 401 || status === 403 || status === 429) return 'refused';
  if (status === 409) return 'conflict';
  if (status < 500) return 'invalid';
  return 'failed';
}

/**
 * Bounds of what one record keeps, so neither its key nor its item grows with a request's content
 * (an ORU^R01 with 57 OBR groups once named every result id in the partition key, past DynamoDB's
 * 2,048-byte key limit: the request failed with 500 and left no record).
 */
export const AUDIT_LIMITS = {
  /** ids kept of a comma-separated list (e.g. resultIds); the rest is counted in `<name>Count` */
  idsPerList: 100,
  /** characters of one resourceIds value */
  valueLength: 8192,
  /** resourceIds entries */
  entries: 32,
  /** characters of a key part (patient id, resource name or id) written as it is; longer ones are hashed */
  keyPart: 256,
} as const;

/** A key part as it is when short, else `sha256:<hex>` of it: keys never grow with the content. */
function keyPart(value: string): string {
  return value.length <= AUDIT_LIMITS.keyPart ? value : `sha256:${createHash('sha256').update(value, 'utf8').digest('hex')}`;
}

/**
 * The resource ids a record keeps: at most {@link AUDIT_LIMITS.entries} entries; a comma-separated list
 * keeps its first ids (whole ids, at most {@link AUDIT_LIMITS.idsPerList} and
 * {@link AUDIT_LIMITS.valueLength} characters) and, when cut, `<name>Count` the number it had.
 */
export function boundedResourceIds(resourceIds: Record<string, string> | undefined): Record<string, string> | undefined {
  if (resourceIds === undefined) return undefined;
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(resourceIds).slice(0, AUDIT_LIMITS.entries)) {
    const ids = String(value).split(',');
    // whole ids only, while the list stays within the value length
    const kept: string[] = [];
    let length = -1;
    for (const id of ids.slice(0, AUDIT_LIMITS.idsPerList)) {
      if (length + 1 + id.length > AUDIT_LIMITS.valueLength) break;
      kept.push(id);
      length += 1 + id.length;
    }
    out[name] = kept.length > 0 ? kept.join(',') : String(value).slice(0, AUDIT_LIMITS.valueLength);
    if (kept.length > 0 && kept.length < ids.length) out[`${name}Count`] = String(ids.length);
  }
  return out;
}

/**
 * Shards of a day's unresolved records: `UNRESOLVED#<day>#<nn>`, nn = a stable hash of the request id
 * mod UNRESOLVED_SHARDS (lib/dynamo/write-shards.ts), so 1,000 refused or failed requests a second
 * spread over 128 partitions (under 8 writes/s each) instead of one. forUnresolvedDay reads them all.
 */
export const UNRESOLVED_SHARDS = 128;

/**
 * The partition key: the patient, else the first resource named (its first id when the value is a
 * list), else the day (sharded by request id). Ids go in attributes; a key part is at most a few
 * hundred bytes.
 */
export function subjectKey(record: Pick<AuditRecord, 'patientId' | 'resourceIds' | 'at'> & { requestId?: string }): string {
  if (record.patientId) return `PATIENT#${keyPart(record.patientId)}`;
  const first = Object.entries(record.resourceIds ?? {})[0];
  // requests that named no verified record are grouped by day, spread over shards
  if (!first) return shardedKeyFor(`UNRESOLVED#${record.at.slice(0, 10)}`, record.requestId ?? '', UNRESOLVED_SHARDS);
  return `RESOURCE#${keyPart(first[0])}#${keyPart(String(first[1]).split(',')[0]!)}`;
}

export class AuditTrail {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  async append(record: AuditRecord): Promise<void> {
    const sk = `${record.at}#${keyPart(record.requestId)}#${randomBytes(4).toString('hex')}`;
    const bounded: AuditRecord = { ...record, ...(record.resourceIds ? { resourceIds: boundedResourceIds(record.resourceIds) } : {}) };
    await this.db.send(
      new PutItemCommand({
        TableName: this.table,
        Item: marshall({ pk: subjectKey(bounded), sk, ...bounded }, { removeUndefinedValues: true }),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** A patient's audit records, oldest first (for `npm run audit -- --patient ID`). */
  forPatient(patientId: string): Promise<AuditRecord[]> {
    return this.forSubject(`PATIENT#${patientId}`);
  }

  /**
   * The records whose first resource id is `name`=`id`, oldest first: e.g. a partner's or a key's
   * changes by the operator CLIs (`npm run audit -- --partner ID`, `--key ID`).
   */
  forResource(name: string, id: string): Promise<AuditRecord[]> {
    return this.forSubject(subjectKey({ resourceIds: { [name]: id }, at: '' }));
  }

  /**
   * The records of requests that named no verified record on one day (`YYYY-MM-DD`, UTC), oldest
   * first: every shard (and the unsharded key of records written before sharding) merged by time.
   */
  async forUnresolvedDay(day: string): Promise<AuditRecord[]> {
    const { rows } = await mergeSortedPartitions<{ sk: string; record: AuditRecord }, Record<string, AttributeValue>>(
      partitionsOf(`UNRESOLVED#${day}`, UNRESOLVED_SHARDS),
      Number.MAX_SAFE_INTEGER,
      (a, b) => ascending(a.sk, b.sk),
      async (pk, _limit, start) => {
        const out = await this.db.send(
          new QueryCommand({
            TableName: this.table,
            KeyConditionExpression: 'pk = :pk',
            ExpressionAttributeValues: marshall({ ':pk': pk }),
            ExclusiveStartKey: start,
          }),
        );
        return {
          rows: (out.Items ?? []).map((item) => {
            const { pk: _pk, sk, ...record } = unmarshall(item);
            return { sk: String(sk), record: record as AuditRecord };
          }),
          lastKey: out.LastEvaluatedKey,
        };
      },
    );
    return rows.map((r) => r.record);
  }

  private async forSubject(pk: string): Promise<AuditRecord[]> {
    const records: AuditRecord[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: marshall({ ':pk': pk }),
          ExclusiveStartKey: start,
        }),
      );
      for (const item of out.Items ?? []) {
        const { pk: _pk, sk: _sk, ...record } = unmarshall(item);
        records.push(record as AuditRecord);
      }
      start = out.LastEvaluatedKey;
    } while (start);
    return records;
  }
}
