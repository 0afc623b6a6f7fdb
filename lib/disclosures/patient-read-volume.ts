/**
 * How many distinct patients one partner's disclosures reached in one UTC hour, so that a partner
 * copying charts (an export key walking every patient id) raises an alarm. Kept in the rate-limit
 * table (TTL `expiresAt`, the table of short-lived counters), with single-item writes only:
 *
 *   pk `reads#<partnerId>#<hour>#<sha256(patientId), 32 hex>`  a marker: PutItem if absent (once per patient and hour)
 *   pk `reads#<partnerId>#<hour>`                             the counter: UpdateItem ADD patients 1, only when a marker is new
 *
 * (`<hour>` is `YYYY-MM-DDTHH`, UTC.) The patient id is hashed: the table never holds one. Both items
 * expire two hours after their hour ends. Cost: at most one marker write per (partner, patient, hour)
 * and one counter write per new one; a container remembers the markers it wrote this hour
 * (at most MAX_REMEMBERED_MARKERS), so repeated reads of the same patient cost no write at all
 * (another container's first read of it costs one conditional write that fails).
 */
import { PutItemCommand, UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { createHash } from 'node:crypto';
import { marshall, unmarshall } from '../aws/attribute-values';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';

/** Distinct patients per partner and hour above which the alarm fires, when the stage sets none (PATIENT_READS_ALARM_THRESHOLD). */
export const DEFAULT_PATIENT_READS_ALARM_THRESHOLD = 500;
/** Markers one container remembers (the hour's set is dropped when the hour changes). */
export const MAX_REMEMBERED_MARKERS = 10_000;
/** Items are kept this long after their hour ends (TTL deletes them; they are never read after it). */
const KEEP_AFTER_HOUR_SECONDS = 2 * 3600;

/** The UTC hour of an instant, `YYYY-MM-DDTHH`. */
export function readHour(at: Date): string {
  return at.toISOString().slice(0, 13);
}

export function counterKey(partnerId: string, hour: string): string {
  return `reads#${partnerId}#${hour}`;
}

export function markerKey(partnerId: string, hour: string, patientId: string): string {
  return `${counterKey(partnerId, hour)}#${createHash('sha256').update(patientId, 'utf8').digest('hex').slice(0, 32)}`;
}

export class PatientReadVolume {
  private hour = '';
  private remembered = new Set<string>();

  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  /**
   * Counts the patients among `patientIds` this partner had not read yet this hour; answers the
   * partner's distinct patients this hour after them, or undefined when none was new.
   */
  async count(partnerId: string, patientIds: readonly string[], at: Date): Promise<number | undefined> {
    const hour = readHour(at);
    if (hour !== this.hour) {
      this.hour = hour;
      this.remembered = new Set();
    }
    const expiresAt = Math.floor(new Date(`${hour}:00:00.000Z`).getTime() / 1000) + 3600 + KEEP_AFTER_HOUR_SECONDS;
    let fresh = 0;
    for (const patientId of new Set(patientIds)) {
      const marker = markerKey(partnerId, hour, patientId);
      if (this.remembered.has(marker)) continue;
      if (await this.claim(marker, expiresAt)) fresh += 1;
      if (this.remembered.size >= MAX_REMEMBERED_MARKERS) this.remembered.clear();
      this.remembered.add(marker);
    }
    if (fresh === 0) return undefined;
    const out = await awsCall(VOLUME_DEPENDENCY, () =>
      this.db.send(
        new UpdateItemCommand({
          TableName: this.table,
          Key: marshall({ pk: counterKey(partnerId, hour) }),
          UpdateExpression: 'ADD patients :n SET expiresAt = :e',
          ExpressionAttributeValues: marshall({ ':n': fresh, ':e': expiresAt }),
          ReturnValues: 'UPDATED_NEW',
        }),
      ),
    );
    return Number(unmarshall(out.Attributes ?? {}).patients ?? fresh);
  }

  /** Writes the marker if absent: true when this call wrote it (the patient is new this hour). */
  private async claim(marker: string, expiresAt: number): Promise<boolean> {
    try {
      await awsCall(VOLUME_DEPENDENCY, () =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: marshall({ pk: marker, expiresAt }),
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
}

const VOLUME_DEPENDENCY = 'rate-limit-table';
