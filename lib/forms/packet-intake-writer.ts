/**
 * What form intake writes (packet-store.ts describes the table): a new packet, and the wrapped
 * match index key the first time one is needed, both conditional puts. PacketIntakeWriter adds
 * them to the PacketReader, so receiveFormIntakeScope bundles neither the state index listing nor
 * the matcher's and reviewer's updates (FormsStore, issue 31 item 5). The puts are functions so
 * FormsStore sends the very same requests.
 */
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall } from '../aws/attribute-values';
import { awsCall } from '../aws/dependency-calls';
import { CONFIG_MATCH_KEY_PK, FORMS_DEPENDENCY, PACKET_SK, isConditionalCheckFailed, packetPk } from './packet-items';
import { PacketReader } from './packet-reader';
import type { PacketRecord } from './types';

/** Stores a new packet unless one with the same id exists. */
export async function putNewPacket(db: DynamoDBClient, table: string, record: PacketRecord): Promise<'created' | 'exists'> {
  try {
    await awsCall(FORMS_DEPENDENCY, () =>
      db.send(
        new PutItemCommand({
          TableName: table,
          Item: marshall({ pk: packetPk(record.packetId), sk: PACKET_SK, ...record }, { removeUndefinedValues: true }),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return 'created';
  } catch (error) {
    if (isConditionalCheckFailed(error)) return 'exists';
    throw error;
  }
}

/** Stores the wrapped match index key unless one exists; false when another writer was first. */
export async function putNewMatchKeyEnvelope(db: DynamoDBClient, table: string, version: string, envelope: string, at: string): Promise<boolean> {
  try {
    await awsCall(FORMS_DEPENDENCY, () =>
      db.send(
        new PutItemCommand({
          TableName: table,
          Item: marshall({ pk: CONFIG_MATCH_KEY_PK, sk: version, envelope, createdAt: at }),
          ConditionExpression: 'attribute_not_exists(pk)',
        }),
      ),
    );
    return true;
  } catch (error) {
    if (isConditionalCheckFailed(error)) return false;
    throw error;
  }
}

/** The reader plus intake's two writes. */
export class PacketIntakeWriter extends PacketReader {
  /** Stores a new packet unless one with the same id exists. */
  createPacket(record: PacketRecord): Promise<'created' | 'exists'> {
    return putNewPacket(this.db, this.table, record);
  }

  /** Stores the wrapped key unless one exists; false when another writer was first. */
  putMatchKeyEnvelope(version: string, envelope: string, at: string): Promise<boolean> {
    return putNewMatchKeyEnvelope(this.db, this.table, version, envelope, at);
  }
}
