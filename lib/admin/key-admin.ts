/**
 * Partner key lifecycle for the operator CLI (`npm run keys`) and the scheduled revokeExpiredKeys:
 * create, resume, revoke, rotate, move, revoke-expired. A key lives in the keys table (hash,
 * partner, scopes, status: what the authorizer checks) and, on a deployed stage, in API Gateway
 * (an API key whose value is the hash, on the tier's usage plan: what the gateway meters). The
 * local stack has no API Gateway management API; there the table is the whole key.
 *
 * Issuing a key (create, rotate) is a list of recorded steps (KEY_STEPS in lib/keys/api-key.ts):
 * the record is written `pending` (refused by the authorizer), then on a stage the gateway key is
 * created and attached to the tier's plan, then the record turns `active`, and for a rotation the
 * old key gets its end (`expiresAt`, the overlap fixed when the rotation started). Each step is
 * recorded on the new key when done, so a run stopped at any step never opens access, never
 * leaves the old key valid for ever once `rotate` or `resume` runs again, and running either
 * again does exactly the steps that are left: the end state is that of an uninterrupted run.
 *
 * Revoke marks the record first (effective on the next request: authorizer TTL 0), then deletes
 * the gateway key (an account has at most 10,000 per region). Every change is audited
 * (lib/admin/admin-audit.ts).
 */
import { STAFF_ONLY_SCOPES, type Scope } from '../config/service';
import {
  generateApiKeySecret,
  hashApiKey,
  KEY_STEPS,
  keyIdFromHash,
  keyIssueFinished,
  keyIsUsable,
  keyStep,
  partnerKind,
  partnerTier,
  PARTNER_TIERS,
  type ApiKeyRecord,
  type KeyStep,
  type PartnerRecord,
  type PartnerTier,
} from '../keys/api-key';
import type { ApiKeyStore } from '../keys/api-key-store';
import { AdminActions, type AdminAudit } from './admin-audit';
import type { GatewayKeys } from './gateway-keys';

/** Refused request (unknown partner or key, wrong state): one line, exit 1, nothing written. */
export class AdminError extends Error {
  override readonly name = 'AdminError';
}

/**
 * A create/rotate (or its resume) stopped after the new key's record was written; running
 * `resume` (or the same `rotate`) again finishes it. `secret` is set when this run issued it.
 */
export class UnfinishedKeyError extends Error {
  override readonly name = 'UnfinishedKeyError';
  constructor(
    readonly key: Pick<ApiKeyRecord, 'keyId' | 'replaces' | 'status'> & { step: KeyStep },
    readonly secret: string | undefined,
    override readonly cause: unknown,
  ) {
    super(`key ${key.keyId} was written but its issue stopped after step ${key.step}: ${(cause as Error).message}`);
  }

  get keyId(): string {
    return this.key.keyId;
  }

  /** What the operator reads: the state left, the command that finishes it, and the secret if this run issued it. */
  advice(stage: string | undefined): string {
    const onStage = stage ? ` --stage ${stage}` : '';
    const { keyId, replaces } = this.key;
    const finish = replaces
      ? `\`npm run keys -- rotate ${replaces}${onStage}\` (or \`npm run keys -- resume ${keyId}${onStage}\`)`
      : `\`npm run keys -- resume ${keyId}${onStage}\``;
    const state =
      this.key.status === 'active'
        ? `key ${keyId} is active${replaces ? `, but the old key ${replaces} has no end yet (it stays valid until the rotation is finished)` : ''}.`
        : `key ${keyId} is written but NOT active (refused by the service).`;
    const secret = this.secret ? ` Its secret (shown once${this.key.status === 'active' ? '' : ', works once finished'}): ${this.secret}` : '';
    const discard = this.key.status === 'active' ? '' : `\nor discard it with \`npm run keys -- revoke ${keyId}${onStage}\`.`;
    return `${state} Finish it with ${finish} (stopped after step ${this.key.step}).${secret}${discard}`;
  }
}

export interface KeyAdminDependencies {
  store: ApiKeyStore;
  /** undefined on the local stack (no API Gateway there) */
  gateway?: GatewayKeys;
  now: () => Date;
  /** progress lines ("what exists, what was done") */
  report: (line: string) => void;
  /** records each change (absent: not audited, e.g. unit tests of the steps) */
  audit?: AdminAudit;
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
  /** undefined when this run finished a rotation an earlier run started (its secret was shown then) */
  secret?: string;
}

export type KeyState = 'pending' | 'active' | 'expiring' | 'expired' | 'revoked';

export function keyState(key: ApiKeyRecord, now: Date): KeyState {
  if (key.status !== 'active') return key.status;
  if (key.expiresAt === undefined) return 'active';
  return keyIsUsable(key, now) ? 'expiring' : 'expired';
}

const after = (key: Pick<ApiKeyRecord, 'step' | 'status'>, step: KeyStep) => KEY_STEPS.indexOf(keyStep(key)) >= KEY_STEPS.indexOf(step);

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

  private async audit(event: Parameters<AdminAudit>[0]): Promise<void> {
    if (this.deps.audit) await this.deps.audit(event);
  }

  async create(request: CreateKeyRequest, links: Pick<ApiKeyRecord, 'replaces' | 'replacesUntil'> = {}): Promise<IssuedKey & { secret: string }> {
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
      status: 'pending',
      step: 'written',
      rateLimit: request.rateLimit,
      rateWindowSeconds: request.rateWindowSeconds,
      createdAt: this.deps.now().toISOString(),
      tier,
      ...links,
    };
    // step `written`
    if (!(await this.deps.store.putKey(record))) throw new Error(`key id collision for ${record.keyId}; run the command again`);
    this.deps.report(`keys table: ${record.keyId} written (pending)${links.replaces ? `, replacing ${links.replaces} (its end: ${links.replacesUntil})` : ''}`);
    const finished = await this.finish(record, secret);
    return { record: finished, secret };
  }

  /**
   * Finishes whatever is left of a key's issue: `keyId` is the unfinished key, or the old key of
   * an unfinished rotation. Reports what already existed; a finished key changes nothing.
   */
  async resume(keyId: string): Promise<ApiKeyRecord> {
    const key = await this.deps.store.findKeyById(keyId);
    if (!key) throw new AdminError(`no key ${keyId}`);
    const successor = await this.unfinishedSuccessor(key);
    if (successor) {
      this.deps.report(`rotation of ${keyId} to ${successor.keyId} stopped after step ${keyStep(successor)}; finishing it`);
      return this.finish(successor, undefined);
    }
    if (key.status === 'revoked') {
      this.deps.report(`${keyId} is revoked; nothing to finish`);
      return key;
    }
    if (keyIssueFinished(key)) {
      this.deps.report(`${keyId} is ${key.status}, every step done; nothing to finish`);
      return key;
    }
    return this.finish(key, undefined);
  }

  /** The newest key that replaces `old`, is not revoked and whose issue is not finished. */
  private async unfinishedSuccessor(old: ApiKeyRecord): Promise<ApiKeyRecord | undefined> {
    const successors = (await this.deps.store.listKeys()).filter((k) => k.replaces === old.keyId && k.status !== 'revoked' && !keyIssueFinished(k));
    return successors.at(-1);
  }

  /**
   * Does the steps of the key's issue that are left, recording each when done. A failure becomes
   * UnfinishedKeyError (the step reached, and the secret when this run issued it).
   */
  private async finish(key: ApiKeyRecord, secret: string | undefined): Promise<ApiKeyRecord> {
    let current = key;
    const record = async (fields: Parameters<ApiKeyStore['updateKey']>[1], expected?: ApiKeyRecord['status']) => {
      if (!(await this.deps.store.updateKey(current.keyHash, fields, expected))) {
        const now = await this.deps.store.getKey(current.keyHash);
        throw new AdminError(`key ${current.keyId} changed while being finished (now ${now?.status ?? 'deleted'}); nothing more done`);
      }
      current = { ...current, ...fields };
    };
    try {
      const gateway = this.deps.gateway;
      const tier = current.tier ?? 'standard';
      if (gateway && !after(current, 'gateway-key')) {
        const { key: gatewayKey, created } = await gateway.ensureKey(current.keyId, current.keyHash, `partner ${current.partnerId}: ${current.label}`);
        this.deps.report(`API Gateway key ${gatewayKey.id}: ${created ? 'created (value = SHA-256 of the secret)' : 'exists'}`);
        await record({ gatewayKeyId: gatewayKey.id, step: 'gateway-key' });
      }
      if (gateway && !after(current, 'usage-plan')) {
        const attached = await gateway.attachToPlan(current.gatewayKeyId!, tier);
        this.deps.report(`usage plan ${await gateway.usagePlanId(tier)} (${tier}): ${attached ? 'key attached' : 'key was attached already'}`);
        await record({ step: 'usage-plan' });
      }
      if (!gateway && !after(current, 'active')) this.deps.report('local stack: no API Gateway usage plan to attach');
      if (!after(current, 'active')) {
        await record({ status: 'active', step: 'active' }, 'pending');
        this.deps.report(`keys table: ${current.keyId} active`);
        await this.audit({
          action: current.replaces ? AdminActions.keyRotate : AdminActions.keyCreate,
          partnerId: current.partnerId,
          keyId: current.keyId,
          changes: [
            { field: 'status', before: 'none', after: 'active' },
            { field: 'scopes', before: '', after: current.scopes.join(',') },
            { field: 'tier', before: '', after: tier },
            ...(current.replaces ? [{ field: 'replaces', before: '', after: `${current.replaces} (valid until ${current.replacesUntil})` }] : []),
          ],
        });
      }
      if (current.replaces && !after(current, 'old-key-expiring')) {
        await this.expireReplaced(current);
        await record({ step: 'old-key-expiring' });
      }
      return current;
    } catch (error) {
      if (error instanceof AdminError || error instanceof UnfinishedKeyError) throw error;
      throw new UnfinishedKeyError({ keyId: current.keyId, replaces: current.replaces, status: current.status, step: keyStep(current) }, secret, error);
    }
  }

  /** After a rotation's new key is active: the old key works until `replacesUntil` (fixed when the rotation started). */
  private async expireReplaced(newKey: ApiKeyRecord): Promise<void> {
    const old = newKey.replaces ? await this.deps.store.findKeyById(newKey.replaces) : undefined;
    if (!old || !newKey.replacesUntil) {
      this.deps.report(`old key ${newKey.replaces}: not found (nothing to end)`);
      return;
    }
    if (old.status !== 'active' || old.expiresAt) {
      this.deps.report(`old key ${old.keyId}: ${old.status}${old.expiresAt ? `, expires ${old.expiresAt}` : ''} (unchanged)`);
      return;
    }
    if (!(await this.deps.store.updateKey(old.keyHash, { expiresAt: newKey.replacesUntil, replacedBy: newKey.keyId }, 'active'))) {
      this.deps.report(`old key ${old.keyId}: no longer active (unchanged)`);
      return;
    }
    this.deps.report(`old key ${old.keyId}: works until ${newKey.replacesUntil}, then refused`);
    await this.audit({
      action: AdminActions.keyRotate,
      partnerId: old.partnerId,
      keyId: old.keyId,
      changes: [
        { field: 'expiresAt', before: '', after: newKey.replacesUntil },
        { field: 'replacedBy', before: '', after: newKey.keyId },
      ],
    });
  }

  /** Refuses the key from the next request on (table), then deletes its API Gateway key. Safe to repeat. */
  async revoke(keyId: string): Promise<ApiKeyRecord> {
    const key = await this.deps.store.findKeyById(keyId);
    if (!key) throw new AdminError(`no key ${keyId}`);
    const now = this.deps.now();
    let revoked: ApiKeyRecord = key;
    if (key.status === 'revoked') {
      this.deps.report(`keys table: ${keyId} was revoked already (${key.revokedAt ?? 'time unknown'})`);
    } else {
      await this.deps.store.updateKey(key.keyHash, { status: 'revoked', revokedAt: now.toISOString() });
      this.deps.report(`keys table: ${keyId} revoked (refused from the next request on)`);
      revoked = { ...key, status: 'revoked', revokedAt: now.toISOString() };
      await this.audit({
        action: AdminActions.keyRevoke,
        partnerId: key.partnerId,
        keyId,
        changes: [{ field: 'status', before: keyState(key, now), after: 'revoked' }],
      });
    }
    return this.deleteGatewayKey(revoked);
  }

  /** A revoked key's API Gateway key, deleted (recorded as `gatewayKeyDeletedAt`); gone already is fine. */
  private async deleteGatewayKey(key: ApiKeyRecord): Promise<ApiKeyRecord> {
    const gateway = this.deps.gateway;
    if (!gateway || key.gatewayKeyDeletedAt) {
      if (key.gatewayKeyDeletedAt) this.deps.report(`API Gateway key of ${key.keyId}: deleted already (${key.gatewayKeyDeletedAt})`);
      return key;
    }
    const gatewayKeyId = key.gatewayKeyId ?? (await gateway.find(key.keyId))?.id;
    if (!gatewayKeyId) this.deps.report(`API Gateway: no key named ${key.keyId} (nothing to delete)`);
    else {
      const deleted = await gateway.delete(gatewayKeyId);
      this.deps.report(`API Gateway key ${gatewayKeyId}: ${deleted ? 'deleted' : 'gone already'}`);
    }
    const at = this.deps.now().toISOString();
    await this.deps.store.updateKey(key.keyHash, { gatewayKeyDeletedAt: at });
    return { ...key, gatewayKeyDeletedAt: at };
  }

  /**
   * Issues a new key with the old one's partner, scopes, tier, limits and label; the old key keeps
   * working for `overlapMs` (0: refused at once), then is refused by the authorizer, and
   * `revoke-expired` (scheduled on a stage) revokes it. When an earlier rotation of this key
   * stopped half-way, this finishes that one instead (no second new key).
   */
  async rotate(keyId: string, overlapMs: number): Promise<IssuedKey & { resumed: boolean }> {
    const old = await this.deps.store.findKeyById(keyId);
    if (!old) throw new AdminError(`no key ${keyId}`);
    const successor = await this.unfinishedSuccessor(old);
    if (successor) {
      this.deps.report(
        `an earlier rotation of ${keyId} to ${successor.keyId} stopped after step ${keyStep(successor)}; finishing it (overlap as it started: until ${successor.replacesUntil})`,
      );
      return { record: await this.finish(successor, undefined), resumed: true };
    }
    const state = keyState(old, this.deps.now());
    if (state !== 'active') {
      throw new AdminError(`key ${keyId} is ${state}${old.replacedBy ? ` (replaced by ${old.replacedBy})` : ''}; only an active key can be rotated`);
    }
    const replacesUntil = new Date(this.deps.now().getTime() + overlapMs).toISOString();
    const issued = await this.create(
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
    return { ...issued, resumed: false };
  }

  /**
   * Moves the key to another tier: on a stage its API Gateway key is taken off every other tier's
   * usage plan (an API key may be on one plan per API stage) and attached to the tier's plan; then
   * the tier is recorded. Safe to repeat: running it again finishes a move stopped half-way.
   */
  async move(keyId: string, tier: PartnerTier): Promise<{ key: ApiKeyRecord; before: PartnerTier }> {
    const key = await this.deps.store.findKeyById(keyId);
    if (!key) throw new AdminError(`no key ${keyId}`);
    if (key.status === 'revoked') throw new AdminError(`key ${keyId} is revoked; nothing to move`);
    if (key.status === 'pending') throw new AdminError(`key ${keyId} is pending: finish it first with \`npm run keys -- resume ${keyId}\``);
    const before = key.tier ?? 'standard';
    const gateway = this.deps.gateway;
    if (gateway) {
      await gateway.usagePlanId(tier); // preflight: the plan exists
      const gatewayKeyId = key.gatewayKeyId ?? (await gateway.find(keyId))?.id;
      if (!gatewayKeyId) throw new AdminError(`key ${keyId} has no API Gateway key: run \`npm run keys -- resume ${keyId}\` first`);
      for (const other of PARTNER_TIERS.filter((t) => t !== tier)) {
        const detached = await gateway.detachFromPlan(gatewayKeyId, other);
        this.deps.report(`usage plan ${await gateway.usagePlanId(other)} (${other}): ${detached ? 'key detached' : 'key was not on it'}`);
      }
      const attached = await gateway.attachToPlan(gatewayKeyId, tier);
      this.deps.report(`usage plan ${await gateway.usagePlanId(tier)} (${tier}): ${attached ? 'key attached' : 'key was attached already'}`);
    } else this.deps.report('local stack: no API Gateway usage plans (the tier is recorded only)');
    if (key.tier !== tier) {
      if (!(await this.deps.store.updateKey(key.keyHash, { tier }, 'active'))) throw new AdminError(`key ${keyId} changed meanwhile; run the command again`);
      this.deps.report(`keys table: ${keyId} tier ${before} -> ${tier}`);
      await this.audit({ action: AdminActions.keyMove, partnerId: key.partnerId, keyId, changes: [{ field: 'tier', before, after: tier }] });
    } else this.deps.report(`keys table: ${keyId} is on tier ${tier} already`);
    return { key: { ...key, tier }, before };
  }

  /**
   * Revokes (table, then the API Gateway key deleted) every key whose rotation overlap has ended,
   * and deletes the API Gateway keys of revoked keys whose deletion has not happened yet (a run
   * stopped half-way, or keys revoked before revoked gateway keys were deleted). Safe to repeat
   * and to schedule (functions/revokeExpiredKeys.ts).
   */
  async revokeExpired(): Promise<{ revoked: string[]; gatewayKeysDeleted: string[] }> {
    const now = this.deps.now();
    const keys = await this.deps.store.listKeys();
    const expired = keys.filter((k) => keyState(k, now) === 'expired');
    for (const key of expired) await this.revoke(key.keyId);
    const leftOver = this.deps.gateway ? keys.filter((k) => k.status === 'revoked' && k.gatewayKeyId && !k.gatewayKeyDeletedAt) : [];
    for (const key of leftOver) await this.deleteGatewayKey(key);
    if (!expired.length) this.deps.report('no expired keys');
    return { revoked: expired.map((k) => k.keyId), gatewayKeysDeleted: leftOver.map((k) => k.keyId) };
  }
}
