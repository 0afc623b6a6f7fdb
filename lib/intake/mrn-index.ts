/**
 * The chart's MRN index: which chart patient holds (assigning authority, MRN). Used by HL7 intake to
 * find the patient of PID-3. No MRN in any key: the key is a keyed hash (ResultKeys.patientIdentifierKey).
 *
 *   chart table item   pk MRNIDX#<hmac>   sk MRN   attributes: patientId, indexedAt
 *
 * Claims are single-item conditional writes: the first patient to claim an identifier keeps it, so two
 * concurrent ADT messages for a new MRN end up on one chart patient.
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';

export const MRN_INDEX_SK = 'MRN';

const call = <T>(run: () => Promise<T>): Promise<T> => awsCall('chart-table', run);

export class MrnIndex {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  private key(identifierKey: string) {
    return { pk: { S: `MRNIDX#${identifierKey}` }, sk: { S: MRN_INDEX_SK } };
  }

  /** The chart patient id holding this identifier, or undefined. */
  async find(identifierKey: string): Promise<string | undefined> {
    const out = await call(() => this.db.send(new GetItemCommand({ TableName: this.table, Key: this.key(identifierKey), ConsistentRead: true })));
    return out.Item?.patientId?.S;
  }

  /** Claims the identifier for `patientId`; returns the patient that holds it afterwards (this one or an earlier one). */
  async claim(identifierKey: string, patientId: string, now: Date): Promise<string> {
    try {
      await call(() =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: { ...this.key(identifierKey), patientId: { S: patientId }, indexedAt: { S: now.toISOString() } },
            ConditionExpression: 'attribute_not_exists(pk) OR patientId = :patientId',
            ExpressionAttributeValues: { ':patientId': { S: patientId } },
          }),
        ),
      );
      return patientId;
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return (await this.find(identifierKey)) ?? patientId;
    }
  }
}
