import { Env } from '../config/service';
import { dynamoDbClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { integerEnv, MissingConfigurationError } from '../aws/environment';
import { tableName } from '../dynamo/table-names';
import { ApiKeyStore } from './api-key-store';
import { CachedAccessRecords, MAX_ACCESS_RECORD_AGE_SECONDS } from './access-records';
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

/**
 * Environment variable: how long (seconds, 0..10, default 10) the authorizer's container answers
 * from a key or partner record it read (lib/keys/access-records.ts). 0 reads both on every request
 * (the test suites set it, so their "revoked on the next request" checks keep their meaning).
 */
export const ACCESS_RECORD_MAX_AGE_ENV = 'ACCESS_RECORD_MAX_AGE_SECONDS';

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

/** ACCESS_RECORD_MAX_AGE_SECONDS: an integer 0..10; unset means 10. */
function accessRecordMaxAgeSeconds(): number {
  const raw = process.env[ACCESS_RECORD_MAX_AGE_ENV];
  if (raw === undefined || raw === '') return MAX_ACCESS_RECORD_AGE_SECONDS;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > MAX_ACCESS_RECORD_AGE_SECONDS)
    throw new MissingConfigurationError(`${ACCESS_RECORD_MAX_AGE_ENV} (integer 0..${MAX_ACCESS_RECORD_AGE_SECONDS})`);
  return value;
}
