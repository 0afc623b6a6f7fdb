import { UpdateItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';

export interface RateLimitState {
  limit: number;
  remaining: number;
  /** Unix epoch seconds at which the current window ends */
  reset: number;
  /** true when this request is over the limit */
  exceeded: boolean;
}

/**
 * Fixed-window counter: one atomic `ADD` per request on the item `<subject>#<window start>`,
 * which expires (TTL) after its window. Concurrent requests each get a distinct count, so no more
 * than `limit` requests in a window are ever told they are within it.
 */
export class FixedWindowRateLimiter {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  async hit(subject: string, limit: number, windowSeconds: number, now: Date): Promise<RateLimitState> {
    const nowSeconds = Math.floor(now.getTime() / 1000);
    const windowStart = nowSeconds - (nowSeconds % windowSeconds);
    const reset = windowStart + windowSeconds;
    const out = await this.db.send(
      new UpdateItemCommand({
        TableName: this.table,
        Key: { pk: { S: `${subject}#${windowStart}` } },
        UpdateExpression: 'ADD #c :one SET expiresAt = if_not_exists(expiresAt, :exp)',
        ExpressionAttributeNames: { '#c': 'count' },
        ExpressionAttributeValues: { ':one': { N: '1' }, ':exp': { N: String(reset + 60) } },
        ReturnValues: 'UPDATED_NEW',
      }),
    );
    const count = Number(out.Attributes?.count?.N ?? '1');
    return { limit, remaining: Math.max(0, limit - count), reset, exceeded: count > limit };
  }
}
