/**
 * Partner key lifecycle for the operator CLI (`npm run keys`): create, resume, revoke, rotate,
 * revoke-expired, list. A key lives in the keys table (hash, partner, scopes, status: what the
 * authorizer checks) and, on a deployed stage, in API Gateway (an API key whose value is the hash,
 * on the tier's usage plan: what the gateway meters). The local stack has no API Gateway
 * management API; there the table is the whole key.
 *
 * Order of writes, so that a run stopped half-way never opens access and can be finished:
 * create writes the record `pending` (refused by the authorizer) first, then the gateway key and
 * plan attachment, and only then flips the record to `active`. `resume <keyId>` finishes a
 * pending key. Revoke marks the record first (effective on the next request: authorizer TTL 0),
 * then disables the gateway key.
 */
import { STAFF_ONLY_SCOPES, type Scope } from '../config/service';
import {
  generateApiKeySecret,
  hashApiKey,
  keyIdFromHash,
  keyIsUsable,
  partnerKind,
  partnerTier,
  type ApiKeyRecord,
  type PartnerRecord,
  type PartnerTier,
} from '../keys/api-key';
import type { ApiKeyStore } from '../keys/api-key-store';
import type { GatewayKeys } from './gateway-keys';

/** Refused request (unknown partner or key, wrong state): one line, exit 1, nothing written. */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}

/** A create/rotate stopped after the pending record was written; `resume` finishes it. */
export class UnfinishedKeyError extends Error {
  override readonly name = 'UnfinishedKeyError';
  constructor(
    readonly keyId: string,
    readonly secret: string,
    override readonly cause: unknown,
  ) {
    super(`key ${keyId} was written as pending but not finished: ${(cause as Error).message}`);
  }
}

export interface KeyAdminDependencies {
  store: ApiKeyStore;
  /** undefined on the local stack (no API Gateway there) */
  gateway?: GatewayKeys;
  now: () => Date;
  /** progress lines ("what exists, what was done") */
  report: (line: string) => void;
}

export interface CreateKeyRequest {
  partnerId: string;
  scopes: Scope[];
  tier?: PartnerTier;
  label?: string;
  rateLimit?: number;
  rateWindowSeconds?: number;
}

export interface IssuedKey {
  record: ApiKeyRecord;
  secret: string;
}

export type KeyState = 'pending' | 'active' | 'expiring' | 'expired' | 'revoked';

export function keyState(key: ApiKeyRecord, now: Date): KeyState {
  if (key.status !== 'active') return key.status;
  if (key.expiresAt === undefined) return 'active';
  return keyIsUsable(key, now) ? 'expiring' : 'expired';
}

export class KeyAdmin {
  constructor(private readonly deps: KeyAdminDependencies) {}

  /** The partner's staff-only rule and existence, checked before anything is written. */
  private async partnerFor(partnerId: string, scopes: Scope[]): Promise<PartnerRecord> {
    const partner = await this.deps.store.getPartner(partnerId);
    if (!partner) throw new AdminError(`unknown partner ${partnerId}: create it first with \`npm run partners -- create ${partnerId} --tier standard\``);
    const staffOnly = scopes.filter((s) => STAFF_ONLY_SCOPES.includes(s));
    if (staffOnly.length && partnerKind(partner) !== 'internal') {
      throw new AdminError(
        `${staffOnly.join(', ')} is for the clinic's own staff only; partner ${partnerId} is ${partnerKind(partner)} (keys with it go to internal partners)`,
      );
    }
    return partner;
  }

  async create(request: CreateKeyRequest, links: Pick<ApiKeyRecord, 'replaces' | 'replacesUntil'> = {}): Promise<IssuedKey> {
    const partner = await this.partnerFor(request.partnerId, request.scopes);
    const tier = request.tier ?? partnerTier(partner);
    // preflight on a stage: the tier's plan must exist before anything is written
    if (this.deps.gateway) await this.deps.gateway.usagePlanId(tier);

    const secret = generateApiKeySecret();
    const keyHash = hashApiKey(secret);
    const record: ApiKeyRecord = {
      keyHash,
      keyId: keyIdFromHash(keyHash),
      partnerId: partner.partnerId,
      label: request.label ?? partner.partnerId,
      scopes: [...new Set(request.scopes)],
      status: this.deps.gateway ? 'pending' : 'active',
      rateLimit: request.rateLimit,
      rateWindowSeconds: request.rateWindowSeconds,
      createdAt: this.deps.now().toISOString(),
      tier,
      ...links,
    };
    if (!(await this.deps.store.putKey(record))) throw new Error(`key id collision for ${record.keyId}; run the command again`);
    if (!this.deps.gateway) {
      this.deps.report(`keys table: ${record.keyId} written (active); local stack: no API Gateway usage plan to attach`);
      return { record: await this.finish(record), secret };
    }
    this.deps.report(`keys table: ${record.keyId} written (pending)`);
    try {
      const finished = await this.finish(record);
      return { record: finished, secret };
    } catch (error) {
      throw new UnfinishedKeyError(record.keyId, secret, error);
    }
  }

  /** Finishes a pending key (gateway key, plan, activation); reports what already existed. */
  async resume(keyId: string): Promise<ApiKeyRecord> {
    const key = await this.deps.store.findKeyById(keyId);
    if (!key) throw new AdminError(`no key ${keyId}`);
    if (key.status !== 'pending') {
      this.deps.report(`${keyId} is ${key.status} already; nothing to finish`);
      return key;
    }
    return this.finish(key);
  }

  private async finish(key: ApiKeyRecord): Promise<ApiKeyRecord> {
    const gateway = this.deps.gateway;
    let current = key;
    if (gateway) {
      const { key: gatewayKey, created } = await gateway.ensureKey(key.keyId, key.keyHash, `partner ${key.partnerId}: ${key.label}`);
      this.deps.report(`API Gateway key ${gatewayKey.id}: ${created ? 'created (value = SHA-256 of the secret)' : 'exists'}`);
      if (key.gatewayKeyId !== gatewayKey.id) await this.deps.store.updateKey(key.keyHash, { gatewayKeyId: gatewayKey.id });
      const tier = key.tier ?? 'standard';
      const attached = await gateway.attachToPlan(gatewayKey.id, tier);
      this.deps.report(`usage plan ${await gateway.usagePlanId(tier)} (${tier}): ${attached ? 'key attached' : 'key was attached already'}`);
      current = { ...current, gatewayKeyId: gatewayKey.id };
    }
    if (key.status === 'pending') {
      await this.deps.store.updateKey(key.keyHash, { status: 'active' }, 'pending');
      this.deps.report(`keys table: ${key.keyId} active`);
      current = { ...current, status: 'active' };
    }
    if (key.replaces) await this.expireReplaced(key);
    return current;
  }

  /** After a rotation's new key is active: the old key works until `replacesUntil`. */
  private async expireReplaced(newKey: ApiKeyRecord): Promise<void> {
    const old = newKey.replaces ? await this.deps.store.findKeyById(newKey.replaces) : undefined;
    if (!old || !newKey.replacesUntil) return;
    if (old.status !== 'active' || old.expiresAt) {
      this.deps.report(`old key ${old.keyId}: ${old.status}${old.expiresAt ? `, expires ${old.expiresAt}` : ''} (unchanged)`);
      return;
    }
    await this.deps.store.updateKey(old.keyHash, { expiresAt: newKey.replacesUntil, replacedBy: newKey.keyId }, 'active');
    this.deps.report(`old key ${old.keyId}: works until ${newKey.replacesUntil}, then refused`);
  }

  async revoke(keyId: string): Promise<ApiKeyRecord> {
    const key = await this.deps.store.findKeyById(keyId);
    if (!key) throw new AdminError(`no key ${keyId}`);
    const now = this.deps.now();
    if (key.status === 'revoked') {
      this.deps.report(`keys table: ${keyId} was revoked already (${key.revokedAt ?? 'time unknown'})`);
    } else {
      await this.deps.store.updateKey(key.keyHash, { status: 'revoked', revokedAt: now.toISOString() });
      this.deps.report(`keys table: ${keyId} revoked (refused from the next request on)`);
    }
    const gateway = this.deps.gateway;
    if (gateway) {
      const gatewayKey = await gateway.find(keyId);
      if (!gatewayKey) this.deps.report(`API Gateway: no key named ${keyId} (nothing to disable)`);
      else if (!gatewayKey.enabled) this.deps.report(`API Gateway key ${gatewayKey.id}: disabled already`);
      else {
        await gateway.disable(gatewayKey.id);
        this.deps.report(`API Gateway key ${gatewayKey.id}: disabled`);
      }
    }
    return { ...key, status: 'revoked', revokedAt: key.revokedAt ?? now.toISOString() };
  }

  /**
   * Issues a new key with the old one's partner, scopes, tier, limits and label; the old key keeps
   * working for `overlapMs` (0: refused at once), then is refused by the authorizer. Run
   * `revoke-expired` afterwards to disable old gateway keys.
   */
  async rotate(keyId: string, overlapMs: number): Promise<IssuedKey> {
    const old = await this.deps.store.findKeyById(keyId);
    if (!old) throw new AdminError(`no key ${keyId}`);
    const state = keyState(old, this.deps.now());
    if (state !== 'active') {
      throw new AdminError(`key ${keyId} is ${state}${old.replacedBy ? ` (replaced by ${old.replacedBy})` : ''}; only an active key can be rotated`);
    }
    const replacesUntil = new Date(this.deps.now().getTime() + overlapMs).toISOString();
    return this.create(
      {
        partnerId: old.partnerId,
        scopes: old.scopes,
        tier: old.tier,
        label: old.label,
        rateLimit: old.rateLimit,
        rateWindowSeconds: old.rateWindowSeconds,
      },
      { replaces: old.keyId, replacesUntil },
    );
  }

  /** Revokes (table + gateway) every key whose rotation overlap has ended. */
  async revokeExpired(): Promise<string[]> {
    const now = this.deps.now();
    const expired = (await this.deps.store.listKeys()).filter((k) => keyState(k, now) === 'expired');
    for (const key of expired) await this.revoke(key.keyId);
    if (!expired.length) this.deps.report('no expired keys');
    return expired.map((k) => k.keyId);
  }
}
