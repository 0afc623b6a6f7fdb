import { Env } from '../config/service';
import { dynamoDbClient } from '../aws/clients';
import { integerEnv } from '../aws/environment';
import { tableName } from '../dynamo/table-names';
import { ApiKeyStore } from './api-key-store';
import { SlidingWindowRateLimiter } from './rate-limiter';
import type { AnonymousLimit } from './access-decision';

export const DEFAULT_ANONYMOUS_LIMIT: AnonymousLimit = { limit: 300, windowSeconds: 60 };

/** The authorizer's collaborators, wired from the environment. */
export function accessDependencies() {
  const db = dynamoDbClient();
  return {
    keys: new ApiKeyStore(db, tableName('keys')),
    limiter: new SlidingWindowRateLimiter(db, tableName('rateLimit')),
    anonymous: {
      limit: integerEnv(Env.anonRateLimit, DEFAULT_ANONYMOUS_LIMIT.limit),
      windowSeconds: integerEnv(Env.anonRateWindowSeconds, DEFAULT_ANONYMOUS_LIMIT.windowSeconds),
    },
  };
}
