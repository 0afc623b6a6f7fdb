import { Env } from '../config/service';
import { dynamoDbClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { integerEnv } from '../aws/environment';
import { tableName } from '../dynamo/table-names';
import { ApiKeyStore } from './api-key-store';
import { accessRecordMaxAgeSeconds, CachedAccessRecords } from './access-records';
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

export { ACCESS_RECORD_MAX_AGE_ENV } from './access-records';

const built = new ContainerCache<{ keys: CachedAccessRecords; limiter: SlidingWindowRateLimiter }>();

/**
 * The authorizer's collaborators, wired from the environment. The record cache and the rate
 * limiter (with its last-seen counter items) live as long as the container: that is what makes the
 * steady-state cost of an authorized request one DynamoDB call (the limiter's UpdateItem).
 */
export function accessDependencies() {
  const maxAgeSeconds = accessRecordMaxAgeSeconds();
  const { keys, limiter } = built.get([dynamoDbClient(), tableName('keys'), tableName('rateLimit'), maxAgeSeconds], ([db, keysTable, rateTable, age]) => ({
    keys: new CachedAccessRecords(new ApiKeyStore(db, keysTable), age),
    limiter: new SlidingWindowRateLimiter(db, rateTable),
  }));
  return {
    keys,
    limiter,
    anonymous: {
      limit: integerEnv(Env.anonRateLimit, DEFAULT_ANONYMOUS_LIMIT.limit),
      windowSeconds: integerEnv(Env.anonRateWindowSeconds, DEFAULT_ANONYMOUS_LIMIT.windowSeconds),
    },
  };
}
