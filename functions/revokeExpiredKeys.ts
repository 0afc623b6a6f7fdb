/**
 * Scheduled (rate(15 minutes), lib/config/service.ts): revokes every partner key whose rotation
 * overlap has ended (the authorizer refuses it already) and deletes its API Gateway key, plus the
 * API Gateway keys of revoked keys not deleted yet. What `npm run keys -- revoke-expired` does; see
 * lib/admin/key-admin.ts (revokeExpired) and lib/admin/revoke-expired-wiring.ts.
 */
import { revokeExpiredKeys, type RevokeExpiredSummary } from '../lib/admin/revoke-expired-wiring';

export async function handler(): Promise<RevokeExpiredSummary> {
  return revokeExpiredKeys();
}
