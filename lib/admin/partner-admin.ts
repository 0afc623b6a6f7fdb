/**
 * Partner records for the operator CLI (`npm run partners`): create, show, list, block, unblock.
 * A partner is one row in the keys table (`PARTNER#<id>`): its policy, tier, kind, rate limit,
 * lab sender ids and HL7 receiving application/facility. Keys name their partner.
 */
import {
  DEFAULT_RATE_LIMIT,
  DEFAULT_RATE_WINDOW_SECONDS,
  partnerKind,
  partnerTier,
  type PartnerKind,
  type PartnerPolicy,
  type PartnerRecord,
  type PartnerTier,
} from '../keys/api-key';
import type { ApiKeyStore } from '../keys/api-key-store';
import { AdminError } from './key-admin';

export const PARTNER_ID_PATTERN = /^[a-z0-9][a-z0-9-]{1,62}$/;

export interface CreatePartnerRequest {
  partnerId: string;
  name?: string;
  tier: PartnerTier;
  kind: PartnerKind;
  senderIds: string[];
  /** form tool sourceSystemIds the partner owns ('*' = any) */
  formSourceIds?: string[];
  receivingApplication?: string;
  receivingFacility?: string;
  rateLimit?: number;
  rateWindowSeconds?: number;
}

export type CreatePartnerOutcome = 'created' | 'exists';

/** The record a create request describes (defaults applied). */
export function partnerFromRequest(request: CreatePartnerRequest): PartnerRecord {
  return {
    partnerId: request.partnerId,
    name: request.name ?? request.partnerId,
    policy: 'active',
    rateLimit: request.rateLimit ?? DEFAULT_RATE_LIMIT,
    rateWindowSeconds: request.rateWindowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS,
    allowedSenderIds: [...new Set(request.senderIds)],
    allowedFormSourceIds: [...new Set(request.formSourceIds ?? [])],
    receivingApplication: request.receivingApplication,
    receivingFacility: request.receivingFacility,
    kind: request.kind,
    tier: request.tier,
  };
}

/** Fields of `wanted` that differ from `existing` (policy is not compared: block/unblock owns it). */
export function partnerDifferences(existing: PartnerRecord, wanted: PartnerRecord): string[] {
  const shown = (p: PartnerRecord) => ({
    name: p.name,
    tier: partnerTier(p),
    kind: partnerKind(p),
    'sender-id': [...p.allowedSenderIds].sort().join(','),
    'form-source': [...(p.allowedFormSourceIds ?? [])].sort().join(','),
    'receiving-application': p.receivingApplication ?? '',
    'receiving-facility': p.receivingFacility ?? '',
    'rate-limit': `${p.rateLimit}/${p.rateWindowSeconds}s`,
  });
  const a = shown(existing);
  const b = shown(wanted);
  return (Object.keys(a) as Array<keyof typeof a>).filter((k) => a[k] !== b[k]).map((k) => `${k} is "${a[k]}", not "${b[k]}"`);
}

export class PartnerAdmin {
  constructor(private readonly store: ApiKeyStore) {}

  /** Idempotent: an identical existing partner is `exists`; a different one is refused. */
  async create(request: CreatePartnerRequest): Promise<{ outcome: CreatePartnerOutcome; partner: PartnerRecord }> {
    if (!PARTNER_ID_PATTERN.test(request.partnerId)) {
      throw new AdminError(`partner id must be lower-case letters, digits and '-', 2-63 characters, got "${request.partnerId}"`);
    }
    const wanted = partnerFromRequest(request);
    if (await this.store.putPartner(wanted, { ifMissing: true })) return { outcome: 'created', partner: wanted };
    const existing = await this.store.getPartner(request.partnerId);
    if (!existing) throw new Error(`partner ${request.partnerId} vanished while being created; run the command again`);
    const differences = partnerDifferences(existing, wanted);
    if (differences.length) throw new AdminError(`partner ${request.partnerId} exists with other settings (${differences.join('; ')}); nothing changed`);
    return { outcome: 'exists', partner: existing };
  }

  async show(partnerId: string): Promise<PartnerRecord> {
    const partner = await this.store.getPartner(partnerId);
    if (!partner) throw new AdminError(`unknown partner ${partnerId}`);
    return partner;
  }

  list(): Promise<PartnerRecord[]> {
    return this.store.listPartners();
  }

  /** Sets the policy; returns the previous one (same value: nothing changed). */
  async setPolicy(partnerId: string, policy: PartnerPolicy): Promise<PartnerPolicy> {
    const partner = await this.show(partnerId);
    if (partner.policy !== policy && !(await this.store.setPartnerPolicy(partnerId, policy))) throw new AdminError(`unknown partner ${partnerId}`);
    return partner.policy;
  }
}
