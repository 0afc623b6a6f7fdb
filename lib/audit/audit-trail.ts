/**
 * The audit trail: one append-only record per PHI access or change (export served, result
 * stored, packet routed, inbox read), with who (partner, key), what (resource ids), when, the
 * request id and the outcome. No PHI: ids only (patient ids are the service's internal opaque
 * identifiers, never MRNs or names). Records are only ever added: PutItem with a condition that
 * the item does not exist; the functions' IAM grants PutItem and nothing else on the table.
 * AuditTrail only appends (what the functions bundle); AuditTrailReader (audit-trail-reader.ts)
 * reads records back for `npm run audit` and the tests.
 */
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '../aws/attribute-values';
import { createHash, randomBytes } from 'node:crypto';
import { shardedKeyFor } from '../dynamo/write-shards';

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
export function keyPart(value: string): string {
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
}
