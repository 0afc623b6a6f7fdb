/**
 * ADT^A40 merge requests, recorded and held for a person to review (never applied automatically).
 *
 *   chart table item   pk MERGE#<reviewId>   sk REVIEW
 *                      attributes: state held, survivingPatientId? (when resolved), priorPatientId?, priorIdentifierKey
 *                      (keyed hash, no MRN), partnerId, receivedAt
 *
 * One conditional put per request: a resend of the same merge message does not add a second review.
 */
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';
import type { MergeReviews } from './message-handlers';

export class ChartMergeReviews implements MergeReviews {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  async hold(request: Parameters<MergeReviews['hold']>[0]): Promise<boolean> {
    try {
      await awsCall('chart-table', () =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: {
              pk: { S: `MERGE#${request.reviewId}` },
              sk: { S: 'REVIEW' },
              state: { S: 'held' },
              ...(request.survivingPatientId ? { survivingPatientId: { S: request.survivingPatientId } } : {}),
              ...(request.priorPatientId ? { priorPatientId: { S: request.priorPatientId } } : {}),
              priorIdentifierKey: { S: request.priorIdentifierKey },
              partnerId: { S: request.partnerId },
              receivedAt: { S: request.receivedAt.toISOString() },
            },
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
