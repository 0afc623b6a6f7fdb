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

/**
 * `pending`: written by `npm run keys -- create` before the API Gateway key exists; refused like an
 * unknown key until the command activates it (so a run that stops half-way never opens access).
 */
export type KeyStatus = 'pending' | 'active' | 'revoked';
export type PartnerPolicy = 'active' | 'blocked';
/**
 * `internal`: the clinic's own staff (the only partners whose keys may hold the inbox scopes, STAFF_ONLY_SCOPES);
 * `external`: everyone else. Stored records without a kind are external.
 */
export type PartnerKind = 'external' | 'internal';
export const PARTNER_KINDS: readonly PartnerKind[] = ['external', 'internal'];
/** API Gateway usage plan a partner's keys are metered on (infra/config.ts `PartnerTiers`). */
export type PartnerTier = 'standard' | 'high';
export const PARTNER_TIERS: readonly PartnerTier[] = ['standard', 'high'];
export const DEFAULT_PARTNER_TIER: PartnerTier = 'standard';
/**
 * Which chart patients a partner may read (docs/write-authority.md, "Relationships"):
 * `related`: only patients it has a holding relationship with (lib/relationships); the default for
 * new external partners. `all`: every chart patient, for the organisation's own downstream systems.
 * Writes always need a relationship, whatever this says.
 */
export type PatientAccess = 'related' | 'all';
export const PATIENT_ACCESS_VALUES: readonly PatientAccess[] = ['related', 'all'];

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
  /** set by `keys rotate` on the old key: refused from this instant on (ISO 8601) */
  expiresAt?: string;
  /** usage plan the key's API Gateway key is attached to (deployed stages) */
  tier?: PartnerTier;
  /** id of the API Gateway API key (deployed stages; absent on the local stack) */
  gatewayKeyId?: string;
  /** `keys rotate`: the key this one replaces / the key that replaced this one */
  replaces?: string;
  replacedBy?: string;
  /** on the new key of a rotation: when the replaced key stops working (ISO 8601) */
  replacesUntil?: string;
  /**
   * the last step of its issue (create, rotate) that is done (KEY_STEPS); absent on records written
   * before steps were recorded (read as `written` when pending, `active` when active)
   */
  step?: KeyStep;
  /** when its API Gateway key was deleted (revoke, revoke-expired; deployed stages) */
  gatewayKeyDeletedAt?: string;
}

/**
 * The recorded steps of issuing a key, in order (lib/admin/key-admin.ts): the record is written
 * `pending`; on a deployed stage its API Gateway key is created and attached to the tier's usage
 * plan; the record turns `active`; for a rotation, the replaced key gets its end (`expiresAt`).
 * Each step is recorded on the key when done, so running `keys rotate` / `keys resume` again does
 * exactly the steps that are left.
 */
export const KEY_STEPS = ['written', 'gateway-key', 'usage-plan', 'active', 'old-key-expiring'] as const;
export type KeyStep = (typeof KEY_STEPS)[number];

/** The last step done (records without `step`: `active` when active, else `written`). */
export function keyStep(key: Pick<ApiKeyRecord, 'step' | 'status'>): KeyStep {
  return key.step ?? (key.status === 'pending' ? 'written' : 'active');
}

/** Whether every step of the key's issue is done (a rotation's last step is the old key's end). */
export function keyIssueFinished(key: Pick<ApiKeyRecord, 'step' | 'status' | 'replaces'>): boolean {
  return KEY_STEPS.indexOf(keyStep(key)) >= KEY_STEPS.indexOf(key.replaces ? 'old-key-expiring' : 'active');
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
  /** lab sender ids (`senderID`) this partner may submit results for (exact ids, each owned by one partner; a stored '*' allows nothing) */
  allowedSenderIds: string[];
  /** form tool `sourceSystemId`s this partner owns (form intake); '*' allows any; absent = none */
  allowedFormSourceIds?: string[];
  /**
   * HL7 CX-4 assigning authorities this partner owns (normalised: trimmed, upper case; absent = none).
   * Each has at most one owner: the claim item `AUTHORITY#<name>` in the keys table (IdentityClaimStore in lib/keys/identity-claims.ts).
   */
  assigningAuthorities?: string[];
  /** MSH-5 / MSH-6 for messages this partner receives */
  receivingApplication?: string;
  receivingFacility?: string;
  /** HL7 export profile (optional; defaults in code) */
  hl7Profile?: Hl7Profile;
  /**
   * IANA time zone (e.g. `America/Chicago`) of the partner's HL7 time stamps: a TS without an offset
   * is a wall-clock time there (docs/hl7-intake.md). Absent: UTC.
   */
  timeZone?: string;
  /** default 'external' (see `partnerKind`) */
  kind?: PartnerKind;
  /** default 'standard' (see `partnerTier`) */
  tier?: PartnerTier;
  /** absent on records written before relationships: `all` (see `partnerPatientAccess`; `npm run partners -- patient-access` lists them) */
  patientAccess?: PatientAccess;
}

export const partnerKind = (partner: Pick<PartnerRecord, 'kind'> | undefined): PartnerKind => (partner?.kind === 'internal' ? 'internal' : 'external');
/** A stored partner without `patientAccess` predates relationships and keeps `all` until an operator changes it. */
export const partnerPatientAccess = (partner: Pick<PartnerRecord, 'patientAccess'> | undefined): PatientAccess =>
  partner?.patientAccess === 'related' ? 'related' : 'all';
export const partnerTier = (partner: Pick<PartnerRecord, 'tier'> | undefined): PartnerTier => (partner?.tier === 'high' ? 'high' : DEFAULT_PARTNER_TIER);

/** Whether a key is usable at `now`: active and not past a rotation's overlap. */
export function keyIsUsable(key: Pick<ApiKeyRecord, 'status' | 'expiresAt'>, now: Date): boolean {
  if (key.status !== 'active') return false;
  return key.expiresAt === undefined || now.getTime() < Date.parse(key.expiresAt);
}

export const DEFAULT_RATE_LIMIT = 1000;
export const DEFAULT_RATE_WINDOW_SECONDS = 60;
