/**
 * The API Gateway half of a partner key on a deployed stage. With `apiKeySource: AUTHORIZER` the
 * authorizer names, for a valid key, the API key whose value is the SHA-256 hex of the secret; the
 * gateway then meters the request on that key's usage plan. So each partner key needs an API
 * Gateway key (name = our key id, value = the hash, never the secret) on its tier's usage plan.
 *
 * Every call here is safe to repeat: an existing key is found by name, an existing plan
 * attachment (ConflictException) counts as done, disabling a disabled key changes nothing.
 */
import { CreateApiKeyCommand, CreateUsagePlanKeyCommand, GetApiKeysCommand, UpdateApiKeyCommand, type APIGatewayClient } from '@aws-sdk/client-api-gateway';
import { GetParameterCommand, type SSMClient } from '@aws-sdk/client-ssm';
import { usagePlanParameterName } from '../config/stage-parameters';
import type { PartnerTier } from '../keys/api-key';

/** A stage resource the CLI needs is missing (stack not deployed, wrong region or stage). */
export class StageNotFoundError extends Error {
  override readonly name = 'StageNotFoundError';
}

export interface GatewayKey {
  id: string;
  enabled: boolean;
}

export class GatewayKeys {
  private readonly planIds = new Map<PartnerTier, string>();

  constructor(
    private readonly apiGateway: APIGatewayClient,
    private readonly ssm: SSMClient,
    /** `interop-<stage>` */
    private readonly prefix: string,
  ) {}

  /** The tier's usage plan id, from the SSM parameter the stack writes. */
  async usagePlanId(tier: PartnerTier): Promise<string> {
    const cached = this.planIds.get(tier);
    if (cached) return cached;
    const name = usagePlanParameterName(this.prefix, tier);
    try {
      const out = await this.ssm.send(new GetParameterCommand({ Name: name }));
      const id = out.Parameter?.Value;
      if (!id) throw new StageNotFoundError(`SSM parameter ${name} is empty: redeploy the stack`);
      this.planIds.set(tier, id);
      return id;
    } catch (error) {
      if ((error as Error).name === 'ParameterNotFound') {
        throw new StageNotFoundError(
          `stage ${this.prefix} has no usage plan for tier ${tier} (SSM parameter ${name} not found): deploy the stack first, or check --stage and AWS_REGION`,
        );
      }
      throw error;
    }
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

  /** Disables the key (it stays, for the record, but meters nothing). */
  async disable(gatewayKeyId: string): Promise<void> {
    await this.apiGateway.send(new UpdateApiKeyCommand({ apiKey: gatewayKeyId, patchOperations: [{ op: 'replace', path: '/enabled', value: 'false' }] }));
  }
}
