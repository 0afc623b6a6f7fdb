import { createHash, randomBytes } from 'node:crypto';
import type { Scope } from '../config/service';

/** Keys are stored and looked up only by their SHA-256; the secret exists in the caller's hands. */
export function hashApiKey(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** A new secret: 32 random bytes, base64url, with a readable prefix so leaked keys are recognisable. */
export function generateApiKeySecret(): string {
  return `ik_${randomBytes(32).toString('base64url')}`;
}

/** Public id of a key (safe to log): the first 12 hex characters of its hash. */
export function keyIdFromHash(hash: string): string {
  return `key_${hash.slice(0, 12)}`;
}

export type KeyStatus = 'active' | 'revoked';
export type PartnerPolicy = 'active' | 'blocked';

export interface ApiKeyRecord {
  keyHash: string;
  keyId: string;
  partnerId: string;
  label: string;
  scopes: Scope[];
  status: KeyStatus;
  /** overrides the partner's limit when set */
  rateLimit?: number;
  rateWindowSeconds?: number;
  createdAt: string;
  revokedAt?: string;
}

export interface PartnerRecord {
  partnerId: string;
  name: string;
  policy: PartnerPolicy;
  rateLimit: number;
  rateWindowSeconds: number;
  /** lab sender ids (`senderID`) this partner may submit results for; '*' allows any */
  allowedSenderIds: string[];
  /** form tool `sourceSystemId`s this partner owns (form intake); '*' allows any; absent = none */
  allowedFormSourceIds?: string[];
  /** MSH-5 / MSH-6 for messages this partner receives */
  receivingApplication?: string;
  receivingFacility?: string;
}

export const DEFAULT_RATE_LIMIT = 1000;
export const DEFAULT_RATE_WINDOW_SECONDS = 60;
