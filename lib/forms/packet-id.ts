import { createHash } from 'node:crypto';

/** `fp_` + 32 lowercase hex characters (128 bits of SHA-256). */
export const PACKET_ID_PATTERN = /^fp_[0-9a-f]{32}$/;

/**
 * The packet id of a submission: deterministic, so the same (partner, sourceSystemId, submissionId)
 * always lands on the same item and a conditional put makes intake idempotent. Scoped by the
 * sending partner, so no partner can take (shadow) another partner's submission ids. The inputs
 * are ids (not PHI); the JSON array encoding keeps ("a|b","c") and ("a","b|c") apart.
 */
export function packetIdFor(partnerId: string, sourceSystemId: string, submissionId: string): string {
  const digest = createHash('sha256')
    .update(JSON.stringify(['form-packet', partnerId, sourceSystemId, submissionId]), 'utf8')
    .digest('hex');
  return `fp_${digest.slice(0, 32)}`;
}

export function isPacketId(value: unknown): value is string {
  return typeof value === 'string' && PACKET_ID_PATTERN.test(value);
}
