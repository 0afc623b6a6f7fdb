/**
 * The audit trail: one append-only record per PHI access or change (export served, result
 * stored, packet routed, inbox read), with who (partner, key), what (resource ids), when, the
 * request id and the outcome. No PHI: ids only (patient ids are the service's internal opaque
 * identifiers, never MRNs or names). Records are only ever added: PutItem with a condition that
 * the item does not exist; the functions' IAM grants PutItem and nothing else on the table.
 */
import { PutItemCommand, QueryCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '@aws-sdk/util-dynamodb';
import { randomBytes } from 'node:crypto';

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

export interface AuditRecord extends AuditEvent {
  at: string;
  requestId: string;
  partnerId: string;
  keyId: string;
  /** the signed-in staff member (user pool subject and sign-in name) when a person, not a key, acted */
  staffSubject?: string;
  staffUsername?: string;
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

function subjectKey(record: AuditRecord): string {
  if (record.patientId) return `PATIENT#${record.patientId}`;
  const first = Object.entries(record.resourceIds ?? {})[0];
  // requests that named no verified record are grouped by day
  return first ? `RESOURCE#${first[0]}#${first[1]}` : `UNRESOLVED#${record.at.slice(0, 10)}`;
}

export class AuditTrail {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  async append(record: AuditRecord): Promise<void> {
    const sk = `${record.at}#${record.requestId}#${randomBytes(4).toString('hex')}`;
    await this.db.send(
      new PutItemCommand({
        TableName: this.table,
        Item: marshall({ pk: subjectKey(record), sk, ...record }, { removeUndefinedValues: true }),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }

  /** A patient's audit records, oldest first (for `npm run audit -- --patient ID`). */
  async forPatient(patientId: string): Promise<AuditRecord[]> {
    const records: AuditRecord[] = [];
    let start: Record<string, AttributeValue> | undefined;
    do {
      const out = await this.db.send(
        new QueryCommand({
          TableName: this.table,
          KeyConditionExpression: 'pk = :pk',
          ExpressionAttributeValues: marshall({ ':pk': `PATIENT#${patientId}` }),
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
