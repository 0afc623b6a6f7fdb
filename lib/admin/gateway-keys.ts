/**
 * The API Gateway half of a partner key on a deployed stage. With `apiKeySource: AUTHORIZER` the
 * authorizer names, for a valid key, the API key whose value is the SHA-256 hex of the secret; the
 * gateway then meters the request on that key's usage plan. So each partner key needs an API
 * Gateway key (name = our key id, value = the hash, never the secret) on its tier's usage plan.
 * A revoked key's API Gateway key is deleted (an account has at most 10,000 per region, shared by
 * every stage).
 *
 * Every call here is safe to repeat: an existing key is found by name, an existing plan
 * attachment (ConflictException) counts as done, and so does deleting a key or a plan attachment
 * that is gone already (NotFoundException).
 */
import {
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  type APIGatewayClient,
} from '@aws-sdk/client-api-gateway';
import type { PartnerTier } from '../keys/api-key';

/** A stage resource the CLI needs is missing (stack not deployed, wrong region or stage). */
export class StageNotFoundError extends Error {
  override readonly name = 'StageNotFoundError';
}

export interface GatewayKey {
  id: string;
  enabled: boolean;
}

/** The usage plan id of a tier (lib/admin/target.ts reads the SSM parameter the stack writes). */
export type UsagePlanIds = (tier: PartnerTier) => Promise<string>;

/** For a caller that never touches usage plans (the scheduled revokeExpiredKeys deletes keys only). */
export const noUsagePlans: UsagePlanIds = (tier) => Promise.reject(new Error(`usage plan of tier ${tier} not available here`));

const notFound = (error: unknown) => (error as Error).name === 'NotFoundException';

export class GatewayKeys {
  private readonly planIds = new Map<PartnerTier, string>();

  constructor(
    private readonly apiGateway: APIGatewayClient,
    private readonly readUsagePlanId: UsagePlanIds,
  ) {}

  /** The tier's usage plan id (read once per tier). */
  async usagePlanId(tier: PartnerTier): Promise<string> {
    const cached = this.planIds.get(tier);
    if (cached) return cached;
    const id = await this.readUsagePlanId(tier);
    this.planIds.set(tier, id);
    return id;
  }

  /** The API Gateway key named `name`, if one exists. */
  async find(name: string): Promise<GatewayKey | undefined> {
    let position: string | undefined;
    do {
      const out = await this.apiGateway.send(new GetApiKeysCommand({ nameQuery: name, includeValues: false, limit: 500, position }));
      const match = out.items?.find((item) => item.name === name && item.id);
      if (match) return { id: match.id!, enabled: match.enabled !== false };
      position = out.position;
    } while (position);
    return undefined;
  }

  /** Creates the key (value = `valueHash`, enabled) unless one with this name exists. */
  async ensureKey(name: string, valueHash: string, description: string): Promise<{ key: GatewayKey; created: boolean }> {
    const existing = await this.find(name);
    if (existing) return { key: existing, created: false };
    const out = await this.apiGateway.send(new CreateApiKeyCommand({ name, value: valueHash, enabled: true, description }));
    if (!out.id) throw new Error('API Gateway CreateApiKey returned no id');
    return { key: { id: out.id, enabled: true }, created: true };
  }

  /** Attaches the key to the tier's usage plan; false when it was attached already. */
  async attachToPlan(gatewayKeyId: string, tier: PartnerTier): Promise<boolean> {
    const usagePlanId = await this.usagePlanId(tier);
    try {
      await this.apiGateway.send(new CreateUsagePlanKeyCommand({ usagePlanId, keyId: gatewayKeyId, keyType: 'API_KEY' }));
      return true;
    } catch (error) {
      if ((error as Error).name === 'ConflictException') return false;
      throw error;
    }
  }

  /** Takes the key off the tier's usage plan; false when it was not on it. */
  async detachFromPlan(gatewayKeyId: string, tier: PartnerTier): Promise<boolean> {
    const usagePlanId = await this.usagePlanId(tier);
    try {
      await this.apiGateway.send(new DeleteUsagePlanKeyCommand({ usagePlanId, keyId: gatewayKeyId }));
      return true;
    } catch (error) {
      if (notFound(error)) return false;
      throw error;
    }
  }

  /** Deletes the key (and with it its plan attachments); false when it was gone already. */
  async delete(gatewayKeyId: string): Promise<boolean> {
    try {
      await this.apiGateway.send(new DeleteApiKeyCommand({ apiKey: gatewayKeyId }));
      return true;
    } catch (error) {
      if (notFound(error)) return false;
      throw error;
    }
  }
}
