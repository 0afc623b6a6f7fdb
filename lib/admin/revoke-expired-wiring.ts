/**
 * Wiring of the scheduled revokeExpiredKeys (functions/revokeExpiredKeys.ts, rate(15 minutes)):
 * the keys table, the audit table and, on a deployed stage, API Gateway's API keys (find by name,
 * delete: exactly its `needs`, lib/config/service.ts). The local stack (STAGE=local) has no API
 * Gateway management API: there the table is the whole key, as for `npm run keys`.
 */
import { APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { dynamoDbClient } from '../aws/clients';
import { requireEnv } from '../aws/environment';
import { AuditTrail } from '../audit/audit-trail';
import { Env } from '../config/service';
import { tableName } from '../dynamo/table-names';
import { ApiKeyStore } from '../keys/api-key-store';
import { logger } from '../observability/logger';
import { auditTrailRecorder } from './admin-audit';
import { GatewayKeys, noUsagePlans } from './gateway-keys';
import { KeyAdmin } from './key-admin';

/** Who the audit trail names for the scheduled run. */
export const SCHEDULED_OPERATOR = 'schedule:revokeExpiredKeys';
const LOCAL_STAGE = 'local';

let apiGateway: APIGatewayClient | undefined;

export interface RevokeExpiredSummary {
  revoked: string[];
  gatewayKeysDeleted: string[];
}

/** The KeyAdmin of the scheduled run: API Gateway on a deployed stage, none on the local stack. */
export function scheduledKeyAdmin(now: () => Date = () => new Date()): KeyAdmin {
  const local = requireEnv(Env.stage) === LOCAL_STAGE;
  const gateway = local ? undefined : new GatewayKeys((apiGateway ??= new APIGatewayClient({ maxAttempts: 3 })), noUsagePlans);
  return new KeyAdmin({
    store: new ApiKeyStore(dynamoDbClient(), tableName('keys')),
    gateway,
    now,
    // the steps (key ids and API Gateway key ids only) are summarised below, not logged one by one
    report: () => undefined,
    audit: auditTrailRecorder(new AuditTrail(dynamoDbClient(), tableName('audit')), SCHEDULED_OPERATOR, now),
  });
}

/** One scheduled run: revokes expired keys, deletes left-over gateway keys, logs ids and counts (no PHI). */
export async function revokeExpiredKeys(admin: KeyAdmin = scheduledKeyAdmin()): Promise<RevokeExpiredSummary> {
  const summary = await admin.revokeExpired();
  for (const keyId of summary.revoked) logger.info('keys.expired_key_revoked', { keyId });
  for (const keyId of summary.gatewayKeysDeleted) logger.info('keys.revoked_key_gateway_key_deleted', { keyId });
  logger.info('keys.revoke_expired', { count: summary.revoked.length, recordCount: summary.gatewayKeysDeleted.length });
  return summary;
}
