/**
 * The plain items of the results table both LabResultStore and NotificationLedger read: a result's
 * current-version pointer and its version items (no KMS: the PHI stays encrypted, only the plain
 * facts are read). One implementation for both, so they never import each other.
 */
import { GetItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { awsCall } from '../aws/dependency-calls';
import type { LabResultStatus, NotificationState, VersionRecord } from './types';

export const CURRENT_SK = 'CURRENT';
export const RESULTS_DEPENDENCY = 'results-table';

export const resultPk = (resultId: string) => `RESULT#${resultId}`;

export function versionRecordOf(item: Record<string, AttributeValue>): VersionRecord {
  const v = unmarshall(item) as Record<string, unknown>;
  return {
    resultId: v.resultId as string,
    versionId: v.versionId as string,
    versionSk: v.sk as string,
    senderId: v.senderId as string,
    partnerId: v.partnerId as string,
    status: v.status as LabResultStatus,
    resultedAtKey: v.resultedAtKey as string,
    rank: v.rank as string,
    receivedAt: v.receivedAt as string,
    ...(typeof v.sourceMessageId === 'string' ? { sourceMessageId: v.sourceMessageId } : {}),
    patientKey: v.patientKey as string,
    patientMatched: v.patientMatched === true,
    summary: v.summary as string,
    documentKeys: (v.documentKeys as string[] | undefined) ?? [],
    notificationState: v.notificationState as NotificationState,
    notificationAttempts: typeof v.notificationAttempts === 'number' ? v.notificationAttempts : 0,
  };
}

export class ResultItems {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  async getPointer(resultId: string): Promise<{ versionId: string; versionSk: string } | undefined> {
    const item = await this.getItem(resultPk(resultId), CURRENT_SK);
    const versionId = item?.versionId?.S;
    const versionSk = item?.versionSk?.S;
    return versionId && versionSk ? { versionId, versionSk } : undefined;
  }

  async getVersionRecord(resultId: string, versionSk: string): Promise<VersionRecord | undefined> {
    const item = await this.getItem(resultPk(resultId), versionSk);
    return item ? versionRecordOf(item) : undefined;
  }

  async getItem(pk: string, sk: string): Promise<Record<string, AttributeValue> | undefined> {
    const out = await awsCall(RESULTS_DEPENDENCY, () =>
      this.db.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true })),
    );
    return out.Item;
  }
}
