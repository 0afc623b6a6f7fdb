/**
 * Partner records for the operator CLI (`npm run partners`): create, update, show, list, block, unblock.
 * A partner is one row in the keys table (`PARTNER#<id>`): its policy, tier, kind, rate limit,
 * lab sender ids, form sources, assigning authorities and HL7 receiving application/facility.
 * Keys name their partner. Each assigning authority it owns also has a claim item
 * (`AUTHORITY#<name>`, ApiKeyStore.claimAuthority): an authority has at most one owner, and the
 * chart's own (CHART_ASSIGNING_AUTHORITY) has none (docs/write-authority.md).
 */
import { normaliseAuthority } from '../chart/identifiers';
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
import type { ApiKeyStore, PartnerUpdate } from '../keys/api-key-store';
import { chartAssigningAuthority, invalidAssigningAuthority } from '../keys/chart-authority';
import { isTimeZone } from '../intake/hl7-values';
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
  /** HL7 CX-4 assigning authorities it owns (normalised; never the chart's own) */
  assigningAuthorities?: string[];
  receivingApplication?: string;
  receivingFacility?: string;
  rateLimit?: number;
  rateWindowSeconds?: number;
  /** IANA time zone of its HL7 time stamps without an offset (absent: UTC) */
  timeZone?: string;
}

export type CreatePartnerOutcome = 'created' | 'exists';

/** `partners update`: the fields given replace the partner's; absent ones keep their value. */
export interface UpdatePartnerRequest {
  partnerId: string;
  name?: string;
  tier?: PartnerTier;
  senderIds?: string[];
  formSourceIds?: string[];
  assigningAuthorities?: string[];
  /** '' removes it */
  receivingApplication?: string;
  receivingFacility?: string;
  rateLimit?: number;
  rateWindowSeconds?: number;
  /** IANA time zone; '' removes it (UTC) */
  timeZone?: string;
}

export interface UpdatePartnerResult {
  before: PartnerRecord;
  partner: PartnerRecord;
  /** `field is "a", now "b"` for every field that changed (empty: nothing changed) */
  changes: string[];
  /** authorities claimed / released by this update */
  claimed: string[];
  released: string[];
}

/** Normalised (trimmed, upper case), without duplicates, in the order given. */
export function normaliseAuthorities(raw: readonly string[]): string[] {
  return [...new Set(raw.map(normaliseAuthority).filter((a) => a !== ''))];
}

/** Refuses (AdminError) a malformed authority and the chart's own. */
function checkAuthorities(authorities: readonly string[]): void {
  const chart = chartAssigningAuthority();
  for (const authority of authorities) {
    const invalid = invalidAssigningAuthority(authority);
    if (invalid) throw new AdminError(`${invalid}; nothing changed`);
    if (authority === chart)
      throw new AdminError(`assigning authority ${authority} is the chart's own (CHART_ASSIGNING_AUTHORITY): no partner can own it; nothing changed`);
  }
}

/** Refuses (AdminError) a time zone the runtime does not know ('' is accepted: it removes the setting). */
function checkTimeZone(timeZone: string | undefined): void {
  if (timeZone === undefined || timeZone === '') return;
  if (!isTimeZone(timeZone)) throw new AdminError(`time zone "${timeZone}" is not an IANA time zone name (e.g. America/Chicago, UTC); nothing changed`);
}

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
    assigningAuthorities: normaliseAuthorities(request.assigningAuthorities ?? []),
    receivingApplication: request.receivingApplication,
    receivingFacility: request.receivingFacility,
    kind: request.kind,
    tier: request.tier,
    ...(request.timeZone ? { timeZone: request.timeZone } : {}),
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
    'assigning-authority': [...(p.assigningAuthorities ?? [])].sort().join(','),
    'receiving-application': p.receivingApplication ?? '',
    'receiving-facility': p.receivingFacility ?? '',
    'rate-limit': `${p.rateLimit}/${p.rateWindowSeconds}s`,
    'time-zone': p.timeZone ?? '',
  });
  const a = shown(existing);
  const b = shown(wanted);
  return (Object.keys(a) as Array<keyof typeof a>).filter((k) => a[k] !== b[k]).map((k) => `${k} is "${a[k]}", not "${b[k]}"`);
}

export class PartnerAdmin {
  constructor(private readonly store: ApiKeyStore) {}

  /**
   * Idempotent: an identical existing partner is `exists`; a different one is refused. Its
   * assigning authorities are claimed before the partner is written; when another partner owns
   * one, nothing is written (claims made by this call are released again).
   */
  async create(request: CreatePartnerRequest, now: Date = new Date()): Promise<{ outcome: CreatePartnerOutcome; partner: PartnerRecord }> {
    if (!PARTNER_ID_PATTERN.test(request.partnerId)) {
      throw new AdminError(`partner id must be lower-case letters, digits and '-', 2-63 characters, got "${request.partnerId}"`);
    }
    checkTimeZone(request.timeZone);
    const wanted = partnerFromRequest(request);
    checkAuthorities(wanted.assigningAuthorities ?? []);
    const compare = (existing: PartnerRecord) => {
      const differences = partnerDifferences(existing, wanted);
      if (differences.length) throw new AdminError(`partner ${request.partnerId} exists with other settings (${differences.join('; ')}); nothing changed`);
    };
    const existing = await this.store.getPartner(request.partnerId);
    if (existing) compare(existing);
    // claims first (an existing identical partner: re-claiming repairs a claim a failed run left out)
    const created = await this.claimAll(request.partnerId, wanted.assigningAuthorities ?? [], now);
    if (existing) return { outcome: 'exists', partner: existing };
    if (await this.store.putPartner(wanted, { ifMissing: true })) return { outcome: 'created', partner: wanted };
    const raced = await this.store.getPartner(request.partnerId);
    try {
      if (!raced) throw new Error(`partner ${request.partnerId} vanished while being created; run the command again`);
      compare(raced);
    } catch (error) {
      await this.releaseAll(request.partnerId, created);
      throw error;
    }
    return { outcome: 'exists', partner: raced };
  }

  /**
   * Replaces the given fields only. Newly listed authorities are claimed first (refused, with
   * nothing changed, when another partner owns one); then the partner is written (conditional
   * update: it must exist; its policy and kind are never touched); then the authorities it no
   * longer lists are released (each only if this partner holds it).
   */
  async update(request: UpdatePartnerRequest, now: Date = new Date()): Promise<UpdatePartnerResult> {
    if (request.name !== undefined && request.name.trim() === '') throw new AdminError('--name cannot be empty; nothing changed');
    checkTimeZone(request.timeZone);
    const before = await this.show(request.partnerId);
    const fields: PartnerUpdate = {
      name: request.name,
      tier: request.tier,
      allowedSenderIds: request.senderIds && [...new Set(request.senderIds)],
      allowedFormSourceIds: request.formSourceIds && [...new Set(request.formSourceIds)],
      assigningAuthorities: request.assigningAuthorities && normaliseAuthorities(request.assigningAuthorities),
      receivingApplication: request.receivingApplication,
      receivingFacility: request.receivingFacility,
      rateLimit: request.rateLimit,
      rateWindowSeconds: request.rateWindowSeconds,
      timeZone: request.timeZone,
    };
    if (Object.values(fields).every((v) => v === undefined)) throw new AdminError('nothing to update: give at least one field to change');
    const after: PartnerRecord = { ...before };
    for (const [name, value] of Object.entries(fields) as Array<[keyof PartnerUpdate, unknown]>) {
      if (value === '') delete after[name];
      else if (value !== undefined) Object.assign(after, { [name]: value });
    }
    const changes = partnerDifferences(before, after).map((d) => d.replace(/, not "/, ', now "'));
    const oldAuthorities = before.assigningAuthorities ?? [];
    const newAuthorities = after.assigningAuthorities ?? [];
    if (fields.assigningAuthorities) checkAuthorities(newAuthorities.filter((a) => !oldAuthorities.includes(a)));
    if (!changes.length) return { before, partner: before, changes, claimed: [], released: [] };

    const claimed = fields.assigningAuthorities ? await this.claimAll(request.partnerId, newAuthorities, now) : [];
    const written = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as PartnerUpdate;
    if (!(await this.store.updatePartner(request.partnerId, written))) {
      await this.releaseAll(request.partnerId, claimed);
      throw new AdminError(`unknown partner ${request.partnerId}`);
    }
    const released: string[] = [];
    for (const authority of oldAuthorities.filter((a) => !newAuthorities.includes(a))) {
      if (await this.store.releaseAuthority(authority, request.partnerId)) released.push(authority);
    }
    return { before, partner: (await this.store.getPartner(request.partnerId)) ?? after, changes, claimed, released };
  }

  /**
   * Claims every authority for the partner, in order. When another partner owns one, the claims
   * this call created are released and the request is refused. Returns the claims it created.
   */
  private async claimAll(partnerId: string, authorities: readonly string[], now: Date): Promise<string[]> {
    const created: string[] = [];
    for (const authority of authorities) {
      const claim = await this.store.claimAuthority(authority, partnerId, now);
      if (claim.claimed) {
        if (claim.created) created.push(authority);
        continue;
      }
      await this.releaseAll(partnerId, created);
      throw new AdminError(`assigning authority ${authority} is owned by partner ${claim.owner ?? '(unknown)'}; an authority has one owner; nothing changed`);
    }
    return created;
  }

  private async releaseAll(partnerId: string, authorities: readonly string[]): Promise<void> {
    for (const authority of authorities) await this.store.releaseAuthority(authority, partnerId);
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
