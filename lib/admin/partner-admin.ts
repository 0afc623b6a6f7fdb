/**
 * Partner records for the operator CLI (`npm run partners`): create, update, show, list, block, unblock.
 * A partner is one row in the keys table (`PARTNER#<id>`): its policy, tier, kind, rate limit,
 * lab sender ids, form sources, assigning authorities, HL7 receiving application/facility, HL7
 * export profile and time zone. Every change (create, update, block, unblock) is one audit record
 * with each changed setting before and after (lib/admin/admin-audit.ts).
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
  type Hl7Profile,
} from '../keys/api-key';
import type { ApiKeyStore, PartnerUpdate } from '../keys/api-key-store';
import { chartAssigningAuthority, invalidAssigningAuthority } from '../keys/chart-authority';
import { isTimeZone } from '../intake/hl7-values';
import { AdminActions, changed, type AdminAudit } from './admin-audit';
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
  /** how it receives the HL7 exports (README, "HL7 partner profiles") */
  hl7Profile?: Hl7Profile;
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
  /** replaces the whole HL7 profile; {} removes it (every default applies) */
  hl7Profile?: Hl7Profile;
}

/**
 * The fields of an HL7 profile and the values each accepts: the vocabulary hl7ProfileOf
 * (lib/exports/message-header.ts) applies, so a profile the CLI writes is never ignored there
 * (partners-cli.test.ts checks it).
 */
const NAMESPACE_ID = /^[!-~](?:[ -~]{0,18}[!-~])?$/;
const HL7_DELIMITERS = /[|^~\\&]/;
export const HL7_PROFILE_FIELDS: Record<keyof Hl7Profile, { values: string; valid: (v: string) => boolean }> = {
  encounterStyle: { values: 'adt or oru', valid: (v) => v === 'adt' || v === 'oru' },
  summaryStyle: { values: 'batch or oru', valid: (v) => v === 'batch' || v === 'oru' },
  noteDocumentType: { values: 'a table 0270 code (upper-case letters and digits, at most 10), e.g. PR', valid: (v) => /^[A-Z0-9]{1,10}$/.test(v) },
  sendingApplication: {
    values: 'an HD namespace id (at most 20 characters, no HL7 delimiters)',
    valid: (v) => NAMESPACE_ID.test(v) && !HL7_DELIMITERS.test(v),
  },
  sendingFacility: { values: 'an HD namespace id (at most 20 characters, no HL7 delimiters)', valid: (v) => NAMESPACE_ID.test(v) && !HL7_DELIMITERS.test(v) },
};

/**
 * `field=value,field=value` (e.g. `encounterStyle=oru,noteDocumentType=PR`) as a profile; '' is the
 * empty profile (every default). An unknown field or a value outside its vocabulary is refused
 * (AdminError naming the field and what it accepts).
 */
export function parseHl7Profile(raw: string): Hl7Profile {
  const profile: Record<string, string> = {};
  for (const part of raw
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    const field = (eq < 0 ? part : part.slice(0, eq)).trim();
    const value = eq < 0 ? '' : part.slice(eq + 1).trim();
    const spec = HL7_PROFILE_FIELDS[field as keyof Hl7Profile];
    if (!spec) throw new AdminError(`unknown HL7 profile field "${field}" (known: ${Object.keys(HL7_PROFILE_FIELDS).join(', ')}); nothing changed`);
    if (field in profile) throw new AdminError(`HL7 profile field ${field} is given twice; nothing changed`);
    if (!spec.valid(value)) throw new AdminError(`HL7 profile ${field} must be ${spec.values}, got "${value}"; nothing changed`);
    profile[field] = value;
  }
  return profile as Hl7Profile;
}

/** The profile as `field=value,...` in field order ('' when empty): how it is shown and compared. */
export function hl7ProfileText(profile: Hl7Profile | undefined): string {
  return (Object.keys(HL7_PROFILE_FIELDS) as Array<keyof Hl7Profile>)
    .filter((f) => profile?.[f] !== undefined && profile[f] !== '')
    .map((f) => `${f}=${profile![f]}`)
    .join(',');
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
    ...(request.hl7Profile && hl7ProfileText(request.hl7Profile) ? { hl7Profile: request.hl7Profile } : {}),
  };
}

/** A partner's settings as the CLI shows and compares them (everything but the policy). */
const shownSettings = (p: PartnerRecord) => ({
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
  'hl7-profile': hl7ProfileText(p.hl7Profile),
});

/** Each setting of `wanted` that differs from `existing`, before and after (policy is block/unblock's). */
export function partnerChanges(existing: PartnerRecord | undefined, wanted: PartnerRecord): Array<{ field: string; before: string; after: string }> {
  const b = shownSettings(wanted);
  const a = existing ? shownSettings(existing) : (Object.fromEntries(Object.keys(b).map((k) => [k, ''])) as typeof b);
  return changed((Object.keys(a) as Array<keyof typeof a>).map((k) => ({ field: k, before: a[k], after: b[k] })));
}

/** Fields of `wanted` that differ from `existing` (policy is not compared: block/unblock owns it). */
export function partnerDifferences(existing: PartnerRecord, wanted: PartnerRecord): string[] {
  return partnerChanges(existing, wanted).map((c) => `${c.field} is "${c.before}", not "${c.after}"`);
}

export class PartnerAdmin {
  constructor(
    private readonly store: ApiKeyStore,
    /** records each change (absent: not audited) */
    private readonly audit?: AdminAudit,
  ) {}

  private async record(event: Parameters<AdminAudit>[0]): Promise<void> {
    if (this.audit) await this.audit(event);
  }

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
    if (await this.store.putPartner(wanted, { ifMissing: true })) {
      await this.record({ action: AdminActions.partnerCreate, partnerId: wanted.partnerId, changes: partnerChanges(undefined, wanted) });
      return { outcome: 'created', partner: wanted };
    }
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
      hl7Profile: request.hl7Profile,
    };
    if (Object.values(fields).every((v) => v === undefined)) throw new AdminError('nothing to update: give at least one field to change');
    const after: PartnerRecord = { ...before };
    for (const [name, value] of Object.entries(fields) as Array<[keyof PartnerUpdate, unknown]>) {
      if (value === undefined) continue;
      if (value === '' || (name === 'hl7Profile' && !hl7ProfileText(value as Hl7Profile))) delete after[name];
      else Object.assign(after, { [name]: value });
    }
    const fieldChanges = partnerChanges(before, after);
    const changes = fieldChanges.map((c) => `${c.field} is "${c.before}", now "${c.after}"`);
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
    await this.record({ action: AdminActions.partnerUpdate, partnerId: request.partnerId, changes: fieldChanges });
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
    if (partner.policy === policy) return policy;
    if (!(await this.store.setPartnerPolicy(partnerId, policy))) throw new AdminError(`unknown partner ${partnerId}`);
    await this.record({
      action: policy === 'blocked' ? AdminActions.partnerBlock : AdminActions.partnerUnblock,
      partnerId,
      changes: [{ field: 'policy', before: partner.policy, after: policy }],
    });
    return partner.policy;
  }
}
