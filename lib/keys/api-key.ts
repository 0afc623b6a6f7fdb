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

/**
 * How a partner receives the HL7 exports (README, "HL7 partner profiles"). Every field is optional;
 * the defaults are in lib/exports/message-header.ts (`hl7ProfileOf`).
 */
export interface Hl7Profile {
  /** encounter export: ADT^A08 (`adt`, default) or ORU^R01 (`oru`) */
  encounterStyle?: 'adt' | 'oru';
  /** patient summary: FHS/BHS batch of typed messages (`batch`, default) or one ORU^R01 (`oru`) */
  summaryStyle?: 'batch' | 'oru';
  /** TXA-2 of the note message (table 0270), default `PN` */
  noteDocumentType?: string;
  /** MSH-3 / MSH-4 this partner sees, default from configuration */
  sendingApplication?: string;
  sendingFacility?: string;
}

export interface PartnerRecord {
  partnerId: string;
  name: string;
  policy: PartnerPolicy;
  rateLimit: number;
  rateWindowSeconds: number;
  /** lab sender ids (`senderID`) this partner may submit results for; '*' allows any */
  allowedSenderIds: string[];
  /** MSH-5 / MSH-6 for messages this partner receives */
  receivingApplication?: string;
  receivingFacility?: string;
  /** HL7 export profile (optional; defaults in code) */
  hl7Profile?: Hl7Profile;
}

export const DEFAULT_RATE_LIMIT = 1000;
export const DEFAULT_RATE_WINDOW_SECONDS = 60;
