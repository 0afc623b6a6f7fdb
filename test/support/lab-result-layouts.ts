/**
 * Items of the results table as the release before issue 31 item 2 wrote them, made from items the
 * current code wrote (same ids, same plaintext, re-encrypted as JSON envelopes): for the tests that
 * prove the readers and the retry job still handle them. Real DynamoDB and KMS calls, in process.
 *
 * Older layout (lib/results/result-store.ts documents both):
 *   version  kind, resultId, versionId, statusRank, resultedAtKey, rank, envelope (JSON envelope, S),
 *            summary (JSON envelope, S), notificationState, notificationAttempts and, while pending,
 *            patientPk NOTIFY#PENDING[#<nn>] / patientSk <next attempt>#<resultId>#<versionId>
 *   pointer  kind, resultId, versionId, versionSk, senderId, status, resultedAtKey, rank, patientPk,
 *            patientSk, patientMatched, summary (JSON envelope, S), updatedAt
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient } from '../../lib/aws/clients';
import { serializeEnvelope } from '../../lib/crypto/envelope-format';
import type { LocalStack } from '../../lib/local/stack';
import { notificationMarkerKey, pendingSortKey } from '../../lib/results/notification-ledger';
import { parseVersionSk } from '../../lib/results/result-items';
import { RECORD_TYPES } from '../../lib/results/result-store';
import { labResultEncryptor } from '../../lib/results/result-wiring';
import { openRecord } from '../../lib/results/sealed-record';
import { statusRank } from '../../lib/results/status';
import type { LabResultStatus } from '../../lib/results/types';

const KEY_CONTEXT = { purpose: 'lab-result', service: 'interop' };

async function getItem(stack: LocalStack, pk: string, sk: string): Promise<Record<string, AttributeValue> | undefined> {
  return (await dynamoDbClient().send(new GetItemCommand({ TableName: stack.tables.results, Key: { pk: { S: pk }, sk: { S: sk } }, ConsistentRead: true })))
    .Item;
}

/** A sealed record (B) re-encrypted as the older JSON envelope (S), same context. */
async function asEnvelope(sealed: Uint8Array, context: Record<string, string>): Promise<string> {
  const plain = await openRecord(labResultEncryptor(), sealed, context, KEY_CONTEXT);
  return serializeEnvelope(await labResultEncryptor().encrypt(plain, context));
}

/**
 * A version item as the older layout wrote it: every attribute repeated beside the keys, the
 * submission and summary as JSON envelopes (`summary` gives the summary's envelope for its context).
 */
async function olderVersionItem(
  resultId: string,
  versionSk: string,
  version: Record<string, AttributeValue>,
  summary: (context: Record<string, string>) => Promise<string>,
  notificationState: 'pending' | 'sent',
): Promise<Record<string, AttributeValue>> {
  const { versionId, resultedAtKey } = parseVersionSk(versionSk)!;
  const status = version.status!.S! as LabResultStatus;
  const receivedAt = version.receivedAt!.S!;
  const context = (recordType: string) => ({ recordType, sender: version.senderId!.S!, resultId, versionId });
  const { submission: _submission, ...plain } = version;
  return {
    ...plain,
    kind: { S: 'version' },
    resultId: { S: resultId },
    versionId: { S: versionId },
    statusRank: { N: String(statusRank(status)) },
    resultedAtKey: { S: resultedAtKey },
    rank: { S: `r2#${statusRank(status)}#${receivedAt}#${versionId}` },
    envelope: { S: await asEnvelope(version.submission!.B!, context(RECORD_TYPES.submission)) },
    summary: { S: await summary(context(RECORD_TYPES.summary)) },
    notificationState: { S: notificationState },
    notificationAttempts: { N: '0' },
  };
}

/**
 * Rewrites a version stored by the current code (with its notification marker still there) as the
 * older layout with its notification owed: the version item in the byPatient index under
 * `indexPartition`, due at `due`; the marker is taken away.
 */
export async function toOlderLayout(stack: LocalStack, resultId: string, versionSk: string, indexPartition: string, due: Date): Promise<void> {
  const { versionId } = parseVersionSk(versionSk)!;
  const version = (await getItem(stack, `RESULT#${resultId}`, versionSk))!;
  const markerKey = notificationMarkerKey(resultId, versionId);
  const marker = (await getItem(stack, markerKey.pk, markerKey.sk))!;
  const item: Record<string, AttributeValue> = {
    ...(await olderVersionItem(resultId, versionSk, version, (context) => asEnvelope(marker.summary!.B!, context), 'pending')),
    patientPk: { S: indexPartition },
    patientSk: { S: pendingSortKey(due, resultId, versionId) },
  };
  await dynamoDbClient().send(new PutItemCommand({ TableName: stack.tables.results, Item: item }));
  await dynamoDbClient().send(new DeleteItemCommand({ TableName: stack.tables.results, Key: { pk: marker.pk!, sk: marker.sk! } }));
}

/** Rewrites a result's current pointer as the older layout wrote it (every attribute repeated, the summary as a JSON envelope). */
export async function pointerToOlderLayout(stack: LocalStack, resultId: string): Promise<void> {
  const pointer = (await getItem(stack, `RESULT#${resultId}`, 'CURRENT'))!;
  const versionSk = pointer.versionSk!.S!;
  const { versionId, resultedAtKey } = parseVersionSk(versionSk)!;
  const version = (await getItem(stack, `RESULT#${resultId}`, versionSk))!;
  const context = { recordType: RECORD_TYPES.summary, sender: pointer.senderId!.S!, resultId, versionId };
  const item: Record<string, AttributeValue> = {
    ...pointer,
    kind: { S: 'current' },
    resultId: { S: resultId },
    status: { S: version.status!.S! },
    resultedAtKey: { S: resultedAtKey },
    summary: { S: await asEnvelope(pointer.summary!.B!, context) },
    updatedAt: { S: new Date().toISOString() },
  };
  await dynamoDbClient().send(new PutItemCommand({ TableName: stack.tables.results, Item: item }));
}

/** Rewrites the current version of a result, its notification sent, as the older layout (no index keys, notificationState sent). */
export async function sentVersionToOlderLayout(stack: LocalStack, resultId: string, versionSk: string): Promise<void> {
  const version = (await getItem(stack, `RESULT#${resultId}`, versionSk))!;
  const pointer = (await getItem(stack, `RESULT#${resultId}`, 'CURRENT'))!;
  if (pointer.versionSk?.S !== versionSk) throw new Error('sentVersionToOlderLayout: the version must be the current one (its summary is on the pointer)');
  const item = await olderVersionItem(
    resultId,
    versionSk,
    version,
    async (context) => pointer.summary?.S ?? (await asEnvelope(pointer.summary!.B!, context)),
    'sent',
  );
  await dynamoDbClient().send(new PutItemCommand({ TableName: stack.tables.results, Item: item }));
}
