import { Env } from '../config/service';
import { dynamoDbClient } from '../aws/clients';
import { integerEnv } from '../aws/environment';
import { tableName } from '../dynamo/table-names';
import { ApiKeyStore } from './api-key-store';
import { SlidingWindowRateLimiter } from './rate-limiter';
import type { AnonymousLimit } from './access-decision';

export const DEFAULT_ANONYMOUS_LIMIT: AnonymousLimit = { limit: 300, windowSeconds: 60 };

/**
 * Environment variable with the value of the API Gateway key of the staff usage plan (cloud only;
 * identifies, grants nothing): the authorizer names it as usageIdentifierKey for requests it
 * authenticated with a staff ID token, so staff are not metered on the anonymous plan. Unset
 * (local stack): staff requests are metered like anonymous ones, as before.
 */
export const STAFF_USAGE_IDENTIFIER_ENV = 'STAFF_USAGE_IDENTIFIER';

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
