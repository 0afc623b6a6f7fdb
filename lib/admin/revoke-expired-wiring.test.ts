/**
 * The scheduled revokeExpiredKeys (functions/revokeExpiredKeys.ts) against the local stack's real
 * keys and audit tables: on the local stack (STAGE=local) it revokes in the table only; on a
 * deployed stage it also deletes API Gateway keys (API Gateway's management API is the only
 * mock: no local emulator of it exists).
 */
import { APIGatewayClient, DeleteApiKeyCommand, GetApiKeysCommand } from '@aws-sdk/client-api-gateway';
import { mockClient } from 'aws-sdk-client-mock';
import { Env, Scopes } from '../config/service';
import { dynamoDbClient } from '../aws/clients';
import { AuditTrailReader } from '../audit/audit-trail-reader';
import { ApiKeyStore } from '../keys/api-key-store';
import { loadHandler } from '../local/function-registry';
import { lambdaContext } from '../local/lambda-context';
import type { LocalStack } from '../local/stack';
import { startTestStack } from '../../test/support/local-stack';
import { keysCli } from './keys-cli';
import { partnersCli } from './partners-cli';
import { revokeExpiredKeys, scheduledKeyAdmin, SCHEDULED_OPERATOR, type RevokeExpiredSummary } from './revoke-expired-wiring';
import { localTarget } from './target';

let stack: LocalStack;
const apiGateway = mockClient(APIGatewayClient);
beforeAll(async () => {
  stack = await startTestStack();
  const io = { out: () => undefined, err: () => undefined };
  expect(await partnersCli(['create', 'sched-lab', '--tier', 'standard'], io, { resolveTarget: () => localTarget() })).toBe(0);
});
beforeEach(() => apiGateway.reset());
afterAll(async () => {
  apiGateway.restore();
  await stack?.close();
});

const store = () => new ApiKeyStore(dynamoDbClient(), stack.tables.keys);

async function keys(argv: string[]): Promise<string> {
  let out = '';
  const code = await keysCli(argv, { out: (t) => void (out += t), err: () => undefined }, { resolveTarget: () => localTarget() });
  expect(code).toBe(0);
  return out;
}
const keyIdOf = (out: string) => /created (key_[0-9a-f]{12})/.exec(out)![1]!;

it('the handler on the local stack: a rotated key whose overlap ended is revoked (table only), audited as the schedule; the next run finds nothing', async () => {
  const oldId = keyIdOf(await keys(['create', '--partner', 'sched-lab', '--scopes', Scopes.ingestResults]));
  const newId = keyIdOf(await keys(['rotate', oldId, '--overlap', '0']));
  const handler = await loadHandler('revokeExpiredKeys');
  const run = () => handler({}, lambdaContext('revokeExpiredKeys', 60), () => undefined) as Promise<RevokeExpiredSummary>;

  const first = await run();
  expect(first.revoked).toContain(oldId);
  expect(await store().findKeyById(oldId)).toMatchObject({ status: 'revoked' });
  expect(await store().findKeyById(newId)).toMatchObject({ status: 'active' });
  const records = await new AuditTrailReader(dynamoDbClient(), stack.tables.audit).forResource('key', oldId);
  expect(records.at(-1)).toMatchObject({
    action: 'admin.key.revoke',
    operator: SCHEDULED_OPERATOR,
    changes: [{ field: 'status', before: 'expired', after: 'revoked' }],
  });
  expect((await run()).revoked).not.toContain(oldId);
  expect(apiGateway.calls()).toHaveLength(0);
});

it('on a deployed stage: the gateway key of the expired key is deleted (DeleteApiKey by its recorded id); gone already (NotFoundException) counts as deleted; then nothing', async () => {
  const saved = process.env[Env.stage];
  process.env[Env.stage] = 'test';
  try {
    const expiredAt = new Date(Date.now() - 60_000).toISOString();
    const base = { partnerId: 'sched-lab', label: 'stage key', scopes: [Scopes.ingestResults], createdAt: new Date().toISOString(), tier: 'standard' as const };
    await store().putKey({ ...base, keyHash: 'a'.repeat(64), keyId: 'key_aaaaaaaaaaaa', status: 'active', expiresAt: expiredAt, gatewayKeyId: 'gw-expired' });
    await store().putKey({ ...base, keyHash: 'b'.repeat(64), keyId: 'key_bbbbbbbbbbbb', status: 'revoked', gatewayKeyId: 'gw-revoked-earlier' });
    apiGateway.on(DeleteApiKeyCommand, { apiKey: 'gw-expired' }).resolves({});
    apiGateway
      .on(DeleteApiKeyCommand, { apiKey: 'gw-revoked-earlier' })
      .rejects(Object.assign(new Error('Invalid API Key identifier'), { name: 'NotFoundException' }));

    const summary = await revokeExpiredKeys(scheduledKeyAdmin());
    expect(summary).toEqual({ revoked: ['key_aaaaaaaaaaaa'], gatewayKeysDeleted: ['key_bbbbbbbbbbbb'] });
    expect(
      apiGateway
        .commandCalls(DeleteApiKeyCommand)
        .map((c) => c.args[0].input.apiKey)
        .sort(),
    ).toEqual(['gw-expired', 'gw-revoked-earlier']);
    expect(apiGateway.commandCalls(GetApiKeysCommand)).toHaveLength(0);
    for (const keyId of ['key_aaaaaaaaaaaa', 'key_bbbbbbbbbbbb'])
      expect(await store().findKeyById(keyId)).toMatchObject({ status: 'revoked', gatewayKeyDeletedAt: expect.any(String) });

    apiGateway.reset();
    expect(await revokeExpiredKeys(scheduledKeyAdmin())).toEqual({ revoked: [], gatewayKeysDeleted: [] });
    expect(apiGateway.calls()).toHaveLength(0);
  } finally {
    process.env[Env.stage] = saved;
  }
});
