/**
 * The plain items of the results table both LabResultStore and NotificationLedger read: a result's
 * current-version pointer and its version items (no KMS: the PHI stays encrypted, only the plain
 * facts are read). One implementation for both, so they never import each other.
 */
import { GetItemCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '../aws/attribute-values';
import { awsCall } from '../aws/dependency-calls';
import { statusRank } from './status';
import type { LabResultStatus, NotificationState, VersionRecord } from './types';

export const CURRENT_SK = 'CURRENT';
export const RESULTS_DEPENDENCY = 'results-table';
/** The results table's index of results by patient (lib/config/tables.ts; checked by lib/dynamo/table-names.test.ts). */
export const RESULTS_BY_PATIENT_INDEX = 'byPatient';

const RESULT_PREFIX = 'RESULT#';
export const resultPk = (resultId: string) => `${RESULT_PREFIX}${resultId}`;

/** Marks the rank format (see the table layout in result-store.ts). */
export const RANK_FORMAT = 'r2';

/**
 * `r2#<statusRank>#<receivedAt ISO>#<versionId>`: string order is precedence order (status
 * precedence, then receipt order, then the version id for the same millisecond). ISO instants of
 * years 0000-9999 are fixed width, so they sort as text.
 */
export function versionRank(status: LabResultStatus, receivedAt: Date, versionId: string): string {
  return `${RANK_FORMAT}#${statusRank(status)}#${receivedAt.toISOString()}#${versionId}`;
}

/** The parts of a version sort key `VERSION#<resultedAtKey>#<statusRank>#<versionId>`. */
export function parseVersionSk(sk: string): { resultedAtKey: string; versionId: string } | undefined {
  const parts = sk.split('#');
  return parts.length === 4 && parts[0] === 'VERSION' ? { resultedAtKey: parts[1]!, versionId: parts[3]! } : undefined;
}

/**
 * The plain facts of a version item, in either layout (result-store.ts): an item written since
 * issue 31 item 2 has no notificationState (its owed notification is a marker item,
 * notification-ledger.ts; the caller reads the marker for the state) and none of the attributes its
 * keys already say (resultId, versionId, resultedAtKey, rank, statusRank, kind).
 */
export function versionRecordOf(item: Record<string, AttributeValue>): VersionRecord {
  const v = unmarshall(item) as Record<string, unknown>;
  const sk = v.sk as string;
  const fromSk = parseVersionSk(sk);
  const resultId = (v.resultId as string | undefined) ?? String(v.pk).slice(RESULT_PREFIX.length);
  const versionId = (v.versionId as string | undefined) ?? fromSk?.versionId ?? '';
  const status = v.status as LabResultStatus;
  const receivedAt = v.receivedAt as string;
  const markerLedger = typeof v.notificationState !== 'string';
  const summary = item.summary?.B ?? item.summary?.S;
  return {
    resultId,
    versionId,
    versionSk: sk,
    senderId: v.senderId as string,
    partnerId: v.partnerId as string,
    status,
    resultedAtKey: (v.resultedAtKey as string | undefined) ?? fromSk?.resultedAtKey ?? '',
    rank: (v.rank as string | undefined) ?? versionRank(status, new Date(receivedAt), versionId),
    receivedAt,
    ...(typeof v.sourceMessageId === 'string' ? { sourceMessageId: v.sourceMessageId } : {}),
    patientKey: v.patientKey as string,
    patientMatched: v.patientMatched === true,
    ...(summary !== undefined ? { summary } : {}),
    documentKeys: (v.documentKeys as string[] | undefined) ?? [],
    notificationLedger: markerLedger ? 'marker' : 'version-item',
    notificationState: markerLedger ? 'pending' : (v.notificationState as NotificationState),
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

  async getItem(pk: string, sk: string): Promise<Record<string, AttributeValue> | undefined> {
    const out = await awsCall(RESULTS_DEPENDENCY, () =>
      this.db.send(new GetItemCommand({ TableName: this.table, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true })),
    );
    return out.Item;
  }
}

/** A version item's plain facts (a function, not a method: readers of summaries bundle ResultItems without versionRecordOf). */
export async function getVersionRecord(items: ResultItems, resultId: string, versionSk: string): Promise<VersionRecord | undefined> {
  const item = await items.getItem(resultPk(resultId), versionSk);
  return item ? versionRecordOf(item) : undefined;
}
