/**
 * Partner records for the operator CLI (`npm run partners`): create, update, show, list, block, unblock.
 * A partner is one row in the keys table (`PARTNER#<id>`): its policy, tier, kind, rate limit,
 * lab sender ids, form sources, assigning authorities, HL7 receiving application/facility, HL7
 * export profile and time zone. Every change (create, update, block, unblock) is one audit record
 * with each changed setting before and after (lib/admin/admin-audit.ts).
 * Keys name their partner. Each assigning authority, sender id and form source it lists also has
 * a claim item (`AUTHORITY#`, `SENDER#`, `FORMSOURCE#` + the id trimmed and upper-cased,
 * lib/keys/identity-claims.ts): each has at most one owner, none is the wildcard, and the chart's
 * own authority (CHART_ASSIGNING_AUTHORITY) has none (docs/write-authority.md). `claims` reports
 * every id with its owner and listers; `repairClaims` claims what a deployment from before claims
 * never claimed.
 */
import { normaliseAuthority } from '../chart/identifiers';
import {
  DEFAULT_RATE_LIMIT,
  DEFAULT_RATE_WINDOW_SECONDS,
  partnerKind,
  partnerPatientAccess,
  partnerTier,
  type PartnerKind,
  type PatientAccess,
  type PartnerPolicy,
  type PartnerRecord,
  type PartnerTier,
  type Hl7Profile,
} from '../keys/api-key';
import type { ApiKeyStore, PartnerUpdate } from '../keys/api-key-store';
import { chartAssigningAuthority, invalidAssigningAuthority } from '../keys/chart-authority';
import {
  IDENTITY_KINDS,
  identityClaimKey,
  identityClaimKeys,
  IdentityClaimStore,
  IdentityNamespaces,
  WILDCARD_ID,
  type IdentityKind,
} from '../keys/identity-claims';
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
  /** form tool sourceSystemIds the partner owns (exact ids, one owner each) */
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
  /** which chart patients it may read (absent: {@link defaultPatientAccess} of its kind) */
  patientAccess?: PatientAccess;
}

/**
 * The patient access of a new partner given none: `related` for an external partner (a lab, an
 * outside EHR, a form tool reaches only the patients it serves), `all` for an internal one (the
 * organisation's own systems and staff). A partner stored before relationships has no value and
 * keeps `all` (partnerPatientAccess) until an operator sets one.
 */
export function defaultPatientAccess(kind: PartnerKind): PatientAccess {
  return kind === 'internal' ? 'all' : 'related';
}

/** How a stored partner's patient access is shown: `all (unset)` for one stored before relationships. */
export function patientAccessText(partner: Pick<PartnerRecord, 'patientAccess'>): string {
  return partner.patientAccess === undefined ? 'all (unset)' : partnerPatientAccess(partner);
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
  patientAccess?: PatientAccess;
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
  /** every claim (authorities, sender ids, form sources) this update created / released */
  claims: { claimed: ClaimRef[]; released: ClaimRef[] };
}

/** One claim: its kind and claim key (trimmed, upper case). */
export interface ClaimRef {
  kind: IdentityKind;
  id: string;
}

/** The claims a partner's lists call for: every kind (or the given ones), in list order. */
export function claimRefsOf(partner: PartnerRecord, kinds: readonly IdentityKind[] = IDENTITY_KINDS): ClaimRef[] {
  return kinds.flatMap((kind) => identityClaimKeys(IdentityNamespaces[kind].listed(partner)).map((id) => ({ kind, id })));
}

const sameClaim = (a: ClaimRef) => (b: ClaimRef) => a.kind === b.kind && a.id === b.id;

/** `sender id DEMO-LAB-LIS` */
export const claimText = (ref: ClaimRef): string => `${IdentityNamespaces[ref.kind].label} ${ref.id}`;

/** A sender id: what JSON senderID accepts (1-128 printable ASCII, no outer space); a form source: a sourceSystemId (1-128 visible ASCII). */
const LISTED_ID_PATTERNS: Record<'sender' | 'formSource', { pattern: RegExp; text: string }> = {
  sender: { pattern: /^[!-~](?:[ -~]{0,126}[!-~])?$/, text: '1-128 printable ASCII characters without leading or trailing space' },
  formSource: { pattern: /^[!-~]{1,128}$/, text: '1-128 visible ASCII characters, no spaces' },
};

/** Refuses (AdminError) the wildcard and an id intake could never match, in a sender id or form source list. */
function checkListedIds(kind: 'sender' | 'formSource', ids: readonly string[]): void {
  const { label, option } = IdentityNamespaces[kind];
  for (const id of ids) {
    if (id.trim() === WILDCARD_ID)
      throw new AdminError(
        `a ${label} cannot be the wildcard "*" (ownership is exclusive: it would cover every ${label}, other partners' too); nothing changed`,
      );
    if (!LISTED_ID_PATTERNS[kind].pattern.test(id)) throw new AdminError(`--${option} must be ${LISTED_ID_PATTERNS[kind].text}, got "${id}"; nothing changed`);
  }
}

/** What `partners claims` says of one id. */
export type ClaimStatus =
  /** listed by one partner, which holds the claim */
  | 'owned'
  /** listed by one partner, no claim (a deployment from before sender/form source claims): --repair claims it */
  | 'unclaimed'
  /** the claim is held by a partner that does not list the id (or by none that exists): --repair releases it, then claims it for its one lister */
  | 'stale'
  /** listed by more than one partner: the operator removes it from all but its owner (partners update) */
  | 'shared'
  /** a partner lists the wildcard "*" (every id of the kind): the operator removes it */
  | 'wildcard'
  /** a partner lists the chart's own assigning authority: the operator removes it */
  | 'chart';

export interface ClaimRow extends ClaimRef {
  /** the partner holding the claim item (none: unclaimed) */
  owner?: string;
  /** the partners whose lists name it (any spelling with the same claim key) */
  listedBy: string[];
  status: ClaimStatus;
}

/** Only the operator resolves these: repair leaves them as they are. */
export const CONFLICT_STATUSES: readonly ClaimStatus[] = ['shared', 'wildcard', 'chart'];

/** One line of what the operator does about a conflict. */
export function conflictAdvice(row: ClaimRow): string {
  const { label, option } = IdentityNamespaces[row.kind];
  const listers = row.listedBy.join(', ');
  switch (row.status) {
    case 'wildcard':
      return `${listers} list${row.listedBy.length === 1 ? 's' : ''} the wildcard ${label} "*" (every ${label}, other partners' too): give each its own ${label}s with npm run partners -- update <partnerId> --${option} ...`;
    case 'chart':
      return `${claimText(row)} is the chart's own (CHART_ASSIGNING_AUTHORITY) and listed by ${listers}: remove it with npm run partners -- update <partnerId> --${option} ...`;
    default:
      return `${claimText(row)} is listed by ${listers}${row.owner ? ` (claimed by ${row.owner})` : ' (claimed by none)'}: remove it from all but its owner with npm run partners -- update <partnerId> --${option} ...`;
  }
}

export interface RepairResult {
  /** claims made for their one lister */
  claimed: Array<ClaimRef & { partnerId: string }>;
  /** stale claims released (held by a partner that does not list the id) */
  released: Array<ClaimRef & { partnerId: string }>;
  /** the report after the repair */
  rows: ClaimRow[];
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

/** Sender ids / form sources as stored: trimmed (intake compares them exactly), without duplicates, in the order given. */
const listedIds = (ids: readonly string[]): string[] => [...new Set(ids.map((id) => id.trim()).filter((id) => id !== ''))];

/** The record a create request describes (defaults applied). */
export function partnerFromRequest(request: CreatePartnerRequest): PartnerRecord {
  return {
    partnerId: request.partnerId,
    name: request.name ?? request.partnerId,
    policy: 'active',
    rateLimit: request.rateLimit ?? DEFAULT_RATE_LIMIT,
    rateWindowSeconds: request.rateWindowSeconds ?? DEFAULT_RATE_WINDOW_SECONDS,
    allowedSenderIds: listedIds(request.senderIds),
    allowedFormSourceIds: listedIds(request.formSourceIds ?? []),
    assigningAuthorities: normaliseAuthorities(request.assigningAuthorities ?? []),
    receivingApplication: request.receivingApplication,
    receivingFacility: request.receivingFacility,
    kind: request.kind,
    tier: request.tier,
    patientAccess: request.patientAccess ?? defaultPatientAccess(request.kind),
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
  'patient-access': patientAccessText(p),
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

/** The partner field that lists each kind. */
const LIST_FIELDS: Record<IdentityKind, 'assigningAuthorities' | 'allowedSenderIds' | 'allowedFormSourceIds'> = {
  authority: 'assigningAuthorities',
  sender: 'allowedSenderIds',
  formSource: 'allowedFormSourceIds',
};

function statusOf(row: ClaimRow, chartAuthority: string): ClaimStatus {
  if (row.id === WILDCARD_ID) return 'wildcard';
  if (row.kind === 'authority' && row.id === chartAuthority && row.listedBy.length) return 'chart';
  if (row.listedBy.length > 1) return 'shared';
  if (!row.owner) return 'unclaimed';
  return row.listedBy[0] === row.owner ? 'owned' : 'stale';
}

export class PartnerAdmin {
  private readonly claims: IdentityClaimStore;

  constructor(
    private readonly store: ApiKeyStore,
    /** records each change (absent: not audited) */
    private readonly audit?: AdminAudit,
  ) {
    this.claims = new IdentityClaimStore(store.db, store.table);
  }

  private async record(event: Parameters<AdminAudit>[0]): Promise<void> {
    if (this.audit) await this.audit(event);
  }

  /**
   * Idempotent: an identical existing partner is `exists`; a different one is refused. Its
   * assigning authorities, sender ids and form sources are claimed before the partner is written;
   * when another partner owns one, nothing is written (claims made by this call are released again).
   */
  async create(request: CreatePartnerRequest, now: Date = new Date()): Promise<{ outcome: CreatePartnerOutcome; partner: PartnerRecord }> {
    if (!PARTNER_ID_PATTERN.test(request.partnerId)) {
      throw new AdminError(`partner id must be lower-case letters, digits and '-', 2-63 characters, got "${request.partnerId}"`);
    }
    checkTimeZone(request.timeZone);
    const wanted = partnerFromRequest(request);
    checkAuthorities(wanted.assigningAuthorities ?? []);
    checkListedIds('sender', wanted.allowedSenderIds);
    checkListedIds('formSource', wanted.allowedFormSourceIds ?? []);
    const compare = (existing: PartnerRecord) => {
      // patient access is compared only when given: re-running an onboarding script on a partner
      // stored before relationships (`all (unset)`) finds it as it is (`update` changes it)
      const differences = partnerDifferences(existing, wanted).filter((d) => !d.startsWith('patient-access '));
      if (request.patientAccess !== undefined && partnerPatientAccess(existing) !== request.patientAccess)
        differences.push(`patient-access is "${partnerPatientAccess(existing)}", not "${request.patientAccess}"`);
      if (differences.length) throw new AdminError(`partner ${request.partnerId} exists with other settings (${differences.join('; ')}); nothing changed`);
    };
    const existing = await this.store.getPartner(request.partnerId);
    if (existing) compare(existing);
    // claims first (an existing identical partner: re-claiming repairs a claim a failed run left out)
    const created = await this.claimAll(request.partnerId, claimRefsOf(wanted), now);
    if (existing) return { outcome: 'exists', partner: existing };
    if (await this.unclaimingOnFailure(request.partnerId, created, () => this.store.putPartner(wanted, { ifMissing: true }))) {
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
   * Replaces the given fields only. The authorities, sender ids and form sources of each list given
   * are claimed first (refused, with nothing changed, when another partner owns one); then the
   * partner is written (conditional update: it must exist; its policy and kind are never touched);
   * then the ones it no longer lists are released (each only if this partner holds it).
   */
  async update(request: UpdatePartnerRequest, now: Date = new Date()): Promise<UpdatePartnerResult> {
    if (request.name !== undefined && request.name.trim() === '') throw new AdminError('--name cannot be empty; nothing changed');
    checkTimeZone(request.timeZone);
    const before = await this.show(request.partnerId);
    const fields: PartnerUpdate = {
      name: request.name,
      tier: request.tier,
      allowedSenderIds: request.senderIds && listedIds(request.senderIds),
      allowedFormSourceIds: request.formSourceIds && listedIds(request.formSourceIds),
      assigningAuthorities: request.assigningAuthorities && normaliseAuthorities(request.assigningAuthorities),
      receivingApplication: request.receivingApplication,
      receivingFacility: request.receivingFacility,
      rateLimit: request.rateLimit,
      rateWindowSeconds: request.rateWindowSeconds,
      timeZone: request.timeZone,
      hl7Profile: request.hl7Profile,
      patientAccess: request.patientAccess,
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
    if (fields.allowedSenderIds) checkListedIds('sender', fields.allowedSenderIds);
    if (fields.allowedFormSourceIds) checkListedIds('formSource', fields.allowedFormSourceIds);
    if (!changes.length) return { before, partner: before, changes, claimed: [], released: [], claims: { claimed: [], released: [] } };

    // only the lists given are claimed: an update of another field never depends on old claims
    const givenKinds = IDENTITY_KINDS.filter((kind) => fields[LIST_FIELDS[kind]] !== undefined);
    const claimed = await this.claimAll(request.partnerId, claimRefsOf(after, givenKinds), now);
    const written = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined)) as PartnerUpdate;
    if (!(await this.unclaimingOnFailure(request.partnerId, claimed, () => this.store.updatePartner(request.partnerId, written)))) {
      await this.releaseAll(request.partnerId, claimed);
      throw new AdminError(`unknown partner ${request.partnerId}`);
    }
    const kept = claimRefsOf(after);
    const released: ClaimRef[] = [];
    for (const ref of claimRefsOf(before, givenKinds).filter((r) => !kept.some(sameClaim(r)))) {
      if (await this.claims.release(ref.kind, ref.id, request.partnerId)) released.push(ref);
    }
    await this.record({ action: AdminActions.partnerUpdate, partnerId: request.partnerId, changes: fieldChanges });
    const authorities = (refs: ClaimRef[]) => refs.filter((r) => r.kind === 'authority').map((r) => r.id);
    return {
      before,
      partner: (await this.store.getPartner(request.partnerId)) ?? after,
      changes,
      claimed: authorities(claimed),
      released: authorities(released),
      claims: { claimed, released },
    };
  }

  /**
   * Claims every id for the partner, in order. When another partner owns one, the claims this call
   * created are released and the request is refused (nothing changed). Returns the claims it created.
   */
  private async claimAll(partnerId: string, refs: readonly ClaimRef[], now: Date): Promise<ClaimRef[]> {
    const created: ClaimRef[] = [];
    for (const ref of refs) {
      const claim = await this.unclaimingOnFailure(partnerId, created, () => this.claims.claim(ref.kind, ref.id, partnerId, now));
      if (claim.claimed) {
        if (claim.created) created.push(ref);
        continue;
      }
      await this.releaseAll(partnerId, created);
      const rule =
        ref.kind === 'authority' ? 'an authority has one owner' : `a ${IdentityNamespaces[ref.kind].label} has one owner (compared trimmed and without case)`;
      throw new AdminError(`${claimText(ref)} is owned by partner ${claim.owner ?? '(unknown)'}; ${rule}; nothing changed`);
    }
    return created;
  }

  /**
   * Releases the partner's claims, each only if it holds it. A release that fails is left: the claim
   * shows as `stale` in `partners claims` and `--repair` releases it (the partner does not list it).
   */
  private async releaseAll(partnerId: string, refs: readonly ClaimRef[]): Promise<void> {
    for (const ref of refs) await this.claims.release(ref.kind, ref.id, partnerId).catch(() => false);
  }

  /** `write`, and when it throws (a dependency failure), the claims this call created are released before the error goes on. */
  private async unclaimingOnFailure<T>(partnerId: string, created: readonly ClaimRef[], write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      await this.releaseAll(partnerId, created);
      throw error;
    }
  }

  /**
   * Every authority, sender id and form source any partner lists or any claim item names: its
   * owner, the partners listing it, and its status (ClaimStatus). Read only.
   */
  async claimsReport(): Promise<ClaimRow[]> {
    const [partners, claims] = await Promise.all([this.store.listPartners(), this.claims.list()]);
    const chart = chartAssigningAuthority();
    const rows = new Map<string, ClaimRow>();
    const rowOf = (kind: IdentityKind, id: string) => {
      const key = `${kind} ${id}`;
      let row = rows.get(key);
      if (!row) rows.set(key, (row = { kind, id, listedBy: [], status: 'owned' }));
      return row;
    };
    for (const partner of partners) {
      for (const kind of IDENTITY_KINDS) {
        const listed = IdentityNamespaces[kind].listed(partner);
        if (listed.some((id) => id.trim() === WILDCARD_ID)) rowOf(kind, WILDCARD_ID).listedBy.push(partner.partnerId);
        for (const id of identityClaimKeys(listed)) rowOf(kind, id).listedBy.push(partner.partnerId);
      }
    }
    for (const claim of claims) rowOf(claim.kind, identityClaimKey(claim.id)).owner = claim.partnerId;
    for (const row of rows.values()) row.status = statusOf(row, chart);
    return [...rows.values()].sort((a, b) => IDENTITY_KINDS.indexOf(a.kind) - IDENTITY_KINDS.indexOf(b.kind) || a.id.localeCompare(b.id));
  }

  /**
   * Makes every id listed by exactly one partner that partner's: an unclaimed one is claimed for it;
   * a stale claim (held by a partner that does not list the id) is released first, then the id is
   * claimed for its one lister if it has one. Conflicts (shared, wildcard, chart) are left as they
   * are for the operator. Each write is one conditional single-item write, so a rerun continues.
   */
  async repairClaims(now: Date = new Date()): Promise<RepairResult> {
    const claimed: RepairResult['claimed'] = [];
    const released: RepairResult['released'] = [];
    for (const row of await this.claimsReport()) {
      // each write is audited under the partner it concerns (the claim's field, before and after)
      const field = `claim ${row.kind} ${row.id}`;
      if (row.status === 'stale' && row.owner && (await this.claims.release(row.kind, row.id, row.owner))) {
        released.push({ kind: row.kind, id: row.id, partnerId: row.owner });
        await this.record({ action: AdminActions.claimRepair, partnerId: row.owner, changes: [{ field, before: row.owner, after: '' }] });
      }
      if ((row.status === 'unclaimed' || row.status === 'stale') && row.listedBy.length === 1) {
        const partnerId = row.listedBy[0]!;
        const claim = await this.claims.claim(row.kind, row.id, partnerId, now);
        if (claim.claimed && claim.created) {
          claimed.push({ kind: row.kind, id: row.id, partnerId });
          await this.record({ action: AdminActions.claimRepair, partnerId, changes: [{ field, before: '', after: partnerId }] });
        }
      }
    }
    return { claimed, released, rows: await this.claimsReport() };
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
