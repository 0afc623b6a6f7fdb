/**
 * Reading the audit trail back (`npm run audit`, tests): a patient's records, a resource's, a
 * day's unresolved ones, oldest first. Apart from AuditTrail (audit-trail.ts), which only appends,
 * so no function bundles these reads.
 */
import { QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { awsCall } from '../aws/dependency-calls';
import { queryPages } from '../aws/query-pages';
import { ascending, mergeSortedPartitions, partitionsOf } from '../dynamo/write-shards';
import { UNRESOLVED_SHARDS, subjectKey, type AuditRecord } from './audit-trail';

export class AuditTrailReader {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

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
        const out = await awsCall(AUDIT_DEPENDENCY, () => this.db.send(new QueryCommand({ ...subjectQuery(this.table, pk), ExclusiveStartKey: start })));
        return { rows: (out.Items ?? []).map(auditRow), lastKey: out.LastEvaluatedKey };
      },
    );
    return rows.map((r) => r.record);
  }

  private async forSubject(pk: string): Promise<AuditRecord[]> {
    const records: AuditRecord[] = [];
    await queryPages(
      this.db,
      AUDIT_DEPENDENCY,
      () => subjectQuery(this.table, pk),
      (items) => {
        for (const item of items) records.push(auditRow(item).record);
        return true;
      },
    );
    return records;
  }
}

const AUDIT_DEPENDENCY = 'audit-table';

/** Every item under one audit partition key. */
function subjectQuery(table: string, pk: string) {
  return { TableName: table, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: marshall({ ':pk': pk }) };
}

/** An audit item as its record (keys dropped) and its sort key (the time order). */
function auditRow(item: Record<string, AttributeValue>): { sk: string; record: AuditRecord } {
  const { pk: _pk, sk, ...record } = unmarshall(item);
  return { sk: String(sk), record: record as AuditRecord };
}
