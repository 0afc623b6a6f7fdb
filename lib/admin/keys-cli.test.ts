/**
 * `npm run keys` / `npm run partners` end to end: the CLIs' code (keysCli / partnersCli, as the
 * scripts call them) against the local stack's real keys table, then the issued secret through the
 * local API Gateway and the real authorizer. On a "stage" the API Gateway management calls go to
 * aws-sdk-client-mock (no local emulator of that API exists); the DynamoDB side is the local
 * stack's table (prefix interop-test = stage "test").
 */
import { createHash } from 'node:crypto';
import {
  APIGatewayClient,
  CreateApiKeyCommand,
  CreateUsagePlanKeyCommand,
  DeleteApiKeyCommand,
  DeleteUsagePlanKeyCommand,
  GetApiKeysCommand,
  UpdateApiKeyCommand,
} from '@aws-sdk/client-api-gateway';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { GetParameterCommand, SSMClient } from '@aws-sdk/client-ssm';
import { mockClient } from 'aws-sdk-client-mock';
import { Scopes } from '../config/service';
import { dynamoDbClient } from '../aws/clients';
import { ChartItemReader } from '../chart/chart-reader';
import { AuditTrail } from '../audit/audit-trail';
import { AuditTrailReader } from '../audit/audit-trail-reader';
import { ApiKeyStore } from '../keys/api-key-store';
import type { LocalStack } from '../local/stack';
import { call, startTestStack } from '../../test/support/local-stack';
import { keysCli } from './keys-cli';
import { partnersCli } from './partners-cli';
import { localTarget, stageTarget, explainTargetFailure, LOCAL_STACK_NOT_RUNNING, type AdminTarget } from './target';

let stack: LocalStack;
const apiGateway = mockClient(APIGatewayClient);
const ssm = mockClient(SSMClient);
const PLAN = { standard: 'plan-std-111', high: 'plan-high-222' };

beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  apiGateway.restore();
  ssm.restore();
  await stack?.close();
});

/**
 * A fake API Gateway key registry behind the mock: created keys are found again by name; plan
 * attachments are kept (attaching twice: ConflictException; deleting what is not there:
 * NotFoundException, as API Gateway answers).
 */
let gatewayKeys: Array<{ id: string; name: string; value: string; enabled: boolean }>;
let attachments: Set<string>;
let gatewayKeySeq = 0;
/** API Gateway operations whose next call fails once (TooManyRequestsException), as a throttled call does */
let faultsOnce: Set<string>;
function failOnce(operation: 'CreateApiKey' | 'CreateUsagePlanKey' | 'DeleteUsagePlanKey' | 'DeleteApiKey'): void {
  faultsOnce.add(operation);
}
function injectedFault(operation: string): void {
  if (faultsOnce.delete(operation)) throw gatewayFault();
}
const gatewayFault = () => Object.assign(new Error('Rate exceeded'), { name: 'TooManyRequestsException' });
const notFoundError = () => Object.assign(new Error('Invalid API Key identifier specified'), { name: 'NotFoundException' });
beforeEach(() => {
  apiGateway.reset();
  ssm.reset();
  gatewayKeys = [];
  attachments = new Set();
  gatewayKeySeq = 0;
  faultsOnce = new Set();
  ssm.on(GetParameterCommand, { Name: '/interop-test/usage-plans/standard' }).resolves({ Parameter: { Value: PLAN.standard } });
  ssm.on(GetParameterCommand, { Name: '/interop-test/usage-plans/high' }).resolves({ Parameter: { Value: PLAN.high } });
  apiGateway.on(GetApiKeysCommand).callsFake((input: { nameQuery?: string }) => ({
    items: gatewayKeys.filter((k) => !input.nameQuery || k.name.startsWith(input.nameQuery)).map(({ id, name, enabled }) => ({ id, name, enabled })),
  }));
  apiGateway.on(CreateApiKeyCommand).callsFake((input: { name: string; value: string; enabled: boolean }) => {
    injectedFault('CreateApiKey');
    const key = { id: `gw${++gatewayKeySeq}`, name: input.name, value: input.value, enabled: input.enabled };
    gatewayKeys.push(key);
    return { id: key.id, name: key.name, enabled: key.enabled };
  });
  apiGateway.on(CreateUsagePlanKeyCommand).callsFake((input: { usagePlanId: string; keyId: string }) => {
    injectedFault('CreateUsagePlanKey');
    const attachment = `${input.usagePlanId}:${input.keyId}`;
    if (attachments.has(attachment)) throw Object.assign(new Error('already attached'), { name: 'ConflictException' });
    attachments.add(attachment);
    return {};
  });
  apiGateway.on(DeleteUsagePlanKeyCommand).callsFake((input: { usagePlanId: string; keyId: string }) => {
    injectedFault('DeleteUsagePlanKey');
    if (!attachments.delete(`${input.usagePlanId}:${input.keyId}`)) throw notFoundError();
    return {};
  });
  apiGateway.on(DeleteApiKeyCommand).callsFake((input: { apiKey: string }) => {
    injectedFault('DeleteApiKey');
    const index = gatewayKeys.findIndex((k) => k.id === input.apiKey);
    if (index < 0) throw notFoundError();
    gatewayKeys.splice(index, 1);
    for (const a of [...attachments]) if (a.endsWith(`:${input.apiKey}`)) attachments.delete(a);
    return {};
  });
  apiGateway.on(UpdateApiKeyCommand).callsFake((input: { apiKey: string }) => {
    const key = gatewayKeys.find((k) => k.id === input.apiKey);
    if (key) key.enabled = false;
    return {};
  });
});

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');

interface Run {
  code: number;
  out: string;
  err: string;
}

function stage(): AdminTarget {
  return stageTarget('test', {
    dynamodb: dynamoDbClient(),
    apiGateway: new APIGatewayClient({ region: 'eu-west-1' }),
    ssm: new SSMClient({ region: 'eu-west-1' }),
    region: 'eu-west-1',
  });
}

async function run(tool: 'keys' | 'partners', argv: string[], options: { target?: () => AdminTarget; now?: () => Date } = {}): Promise<Run> {
  let out = '';
  let err = '';
  const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
  const resolveTarget = (stageName: string | undefined) => (options.target ? options.target() : stageName ? stage() : localTarget());
  const cli = tool === 'keys' ? keysCli : partnersCli;
  const code = await cli(argv, io, { resolveTarget, now: options.now });
  return { code, out, err };
}

const secretOf = (r: Run) => /secret \(shown once\): (\S+)/.exec(r.out)?.[1] ?? '';
const keyIdOf = (r: Run) => /created (key_[0-9a-f]{12})/.exec(r.out)?.[1] ?? '';

let seq = 0;
async function postResult(secret: string, senderID: string): Promise<number> {
  const body = {
    data: {
      senderID,
      patientID: `p-${++seq}`,
      accessionNumber: `ACC-${Date.now()}-${seq}`,
      status: 'final',
      ResultedDateUTC: '2024-03-01T09:30:00Z',
      results: [{ testName: 'Glucose', result: '98', units: 'mg/dL' }],
    },
  };
  const res = await call(stack, 'POST', '/receiveTestData', {
    headers: { 'x-api-key': secret, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return res.status;
}

const store = () => new ApiKeyStore(dynamoDbClient(), stack.tables.keys);

describe('the Done-when demo on the local stack', () => {
  it('partners create, keys create -> works at once; rotate keeps the old secret for the overlap; revoke -> 401 on the next request', async () => {
    const partner = await run('partners', ['create', 'acme-lab', '--tier', 'standard', '--sender-id', 'ACME']);
    expect(partner).toMatchObject({ code: 0, out: expect.stringContaining('created partner acme-lab') });
    // idempotent
    expect(await run('partners', ['create', 'acme-lab', '--tier', 'standard', '--sender-id', 'ACME'])).toMatchObject({
      code: 0,
      out: expect.stringContaining('exists'),
    });

    const created = await run('keys', ['create', '--partner', 'acme-lab', '--scopes', Scopes.ingestResults]);
    expect(created.code).toBe(0);
    const secret = secretOf(created);
    expect(secret).toMatch(/^ik_/);
    expect(await postResult(secret, 'ACME')).toBe(200);
    expect(await postResult(secret, 'demo-lab')).toBe(403); // sender id not owned by acme-lab

    const rotated = await run('keys', ['rotate', keyIdOf(created), '--overlap', '1h']);
    expect(rotated.code).toBe(0);
    const newSecret = secretOf(rotated);
    expect(await postResult(newSecret, 'ACME')).toBe(200);
    expect(await postResult(secret, 'ACME')).toBe(200); // overlap: the old secret still works
    const listed = await run('keys', ['list', '--partner', 'acme-lab', '--json']);
    const states = Object.fromEntries((JSON.parse(listed.out) as Array<{ keyId: string; state: string; replacedBy?: string }>).map((k) => [k.keyId, k]));
    expect(states[keyIdOf(created)]).toMatchObject({ state: 'expiring', replacedBy: keyIdOf(rotated) });
    expect(states[keyIdOf(rotated)]).toMatchObject({ state: 'active' });

    const revoked = await run('keys', ['revoke', keyIdOf(rotated)]);
    expect(revoked).toMatchObject({ code: 0, out: `revoked ${keyIdOf(rotated)}\n` });
    expect(await postResult(newSecret, 'ACME')).toBe(401);
    expect(apiGateway.calls()).toHaveLength(0); // the local stack has no API Gateway
  });

  it('the old secret is refused once the overlap has ended, and revoke-expired revokes it', async () => {
    await run('partners', ['create', 'overlap-lab', '--tier', 'standard', '--sender-id', 'OVL']);
    const created = await run('keys', ['create', '--partner', 'overlap-lab', '--scopes', Scopes.ingestResults]);
    // overlap 0: the overlap ends as the rotation finishes (no waiting in the test)
    const rotated = await run('keys', ['rotate', keyIdOf(created), '--overlap', '0']);
    expect(rotated.code).toBe(0);
    expect(await postResult(secretOf(created), 'OVL')).toBe(401);
    expect(await postResult(secretOf(rotated), 'OVL')).toBe(200);
    const swept = await run('keys', ['revoke-expired']);
    expect(swept.out).toContain(keyIdOf(created));
    expect((await store().findKeyById(keyIdOf(created)))?.status).toBe('revoked');
    expect(await postResult(secretOf(rotated), 'OVL')).toBe(200);
  });
});

describe('a form tool onboarded with the CLIs', () => {
  async function postPacket(secret: string, sourceSystemId: string): Promise<number> {
    const payload = {
      sourceSystemId,
      formId: 'intake-v1',
      submissionId: `sub-${++seq}`,
      patient: { firstName: 'Ada', lastName: 'Nguyen', dob: '1990-02-03' },
      answers: { q1: 'yes' },
    };
    const res = await call(stack, 'POST', '/receiveFormIntakeScope', {
      headers: { 'x-api-key': secret, 'content-type': 'application/json' },
      body: JSON.stringify({ payload }),
    });
    return res.status;
  }

  it('partners create --form-source gives it its sourceSystemIds: its packets are accepted, any other source is 403', async () => {
    const partner = await run('partners', ['create', 'acme-forms', '--tier', 'standard', '--form-source', 'acme-intake,acme-kiosk']);
    expect(partner.code).toBe(0);
    const shown = await run('partners', ['show', 'acme-forms']);
    expect(shown.out).toContain('acme-intake,acme-kiosk');
    // the same settings again are idempotent; another source list is refused
    expect((await run('partners', ['create', 'acme-forms', '--tier', 'standard', '--form-source', 'acme-kiosk,acme-intake'])).out).toContain('exists');
    const changed = await run('partners', ['create', 'acme-forms', '--tier', 'standard', '--form-source', 'other']);
    expect(changed.code).not.toBe(0);
    expect(changed.err).toContain('form-source');

    const secret = secretOf(await run('keys', ['create', '--partner', 'acme-forms', '--scopes', Scopes.ingestForms]));
    expect(await postPacket(secret, 'acme-intake')).toBe(202);
    expect(await postPacket(secret, 'acme-kiosk')).toBe(202);
    expect(await postPacket(secret, 'demo-form-tool')).toBe(403); // another partner's source
  });

  it('without --form-source a form tool owns no source: every packet is 403', async () => {
    await run('partners', ['create', 'bare-forms', '--tier', 'standard']);
    const secret = secretOf(await run('keys', ['create', '--partner', 'bare-forms', '--scopes', Scopes.ingestForms]));
    expect(await postPacket(secret, 'bare-intake')).toBe(403);
  });
});

describe('against a stage: the exact API Gateway calls', () => {
  beforeAll(async () => {
    expect((await run('partners', ['create', 'stage-lab', '--tier', 'high', '--sender-id', 'STG', '--stage', 'test'])).code).toBe(0);
  });

  it('create: CreateApiKey with the SHA-256 of the secret as value, CreateUsagePlanKey on the tier plan, then the key works', async () => {
    const created = await run('keys', ['create', '--partner', 'stage-lab', '--scopes', Scopes.ingestResults, '--stage', 'test']);
    expect(created.code).toBe(0);
    const secret = secretOf(created);
    const keyId = keyIdOf(created);
    const creates = apiGateway.commandCalls(CreateApiKeyCommand);
    expect(creates).toHaveLength(1);
    expect(creates[0]!.args[0].input).toEqual({
      name: keyId,
      value: sha256(secret),
      enabled: true,
      description: 'partner stage-lab: stage-lab',
    });
    expect(JSON.stringify(apiGateway.calls().map((c) => c.args[0].input))).not.toContain(secret);
    const attach = apiGateway.commandCalls(CreateUsagePlanKeyCommand);
    expect(attach.map((c) => c.args[0].input)).toEqual([{ usagePlanId: PLAN.high, keyId: 'gw1', keyType: 'API_KEY' }]);
    expect(await store().findKeyById(keyId)).toMatchObject({ status: 'active', gatewayKeyId: 'gw1', tier: 'high' });
    expect(await postResult(secret, 'STG')).toBe(200);

    // --tier overrides the partner's tier
    const standard = await run('keys', ['create', '--partner', 'stage-lab', '--scopes', Scopes.ingestResults, '--tier', 'standard', '--stage', 'test']);
    expect(apiGateway.commandCalls(CreateUsagePlanKeyCommand)[1]!.args[0].input).toEqual({
      usagePlanId: PLAN.standard,
      keyId: 'gw2',
      keyType: 'API_KEY',
    });
    expect(standard.code).toBe(0);

    // revoke: table first, then DeleteApiKey (not a disable: an account holds 10,000 keys per region); again: nothing more to do
    const revoked = await run('keys', ['revoke', keyId, '--stage', 'test']);
    expect(revoked.code).toBe(0);
    expect(apiGateway.commandCalls(DeleteApiKeyCommand).map((c) => c.args[0].input)).toEqual([{ apiKey: 'gw1' }]);
    expect(apiGateway.commandCalls(UpdateApiKeyCommand)).toHaveLength(0);
    expect(gatewayKeys.map((k) => k.id)).toEqual(['gw2']);
    expect(await store().findKeyById(keyId)).toMatchObject({ status: 'revoked', gatewayKeyDeletedAt: expect.any(String) });
    expect(await postResult(secret, 'STG')).toBe(401);
    const again = await run('keys', ['revoke', keyId, '--stage', 'test']);
    expect(again.code).toBe(0);
    expect(again.err).toContain('revoked already');
    expect(again.err).toContain('deleted already');
    expect(apiGateway.commandCalls(DeleteApiKeyCommand)).toHaveLength(1);
  });

  it('a run that fails half-way leaves a pending key that is refused, and resume finishes it without a second API Gateway key', async () => {
    failOnce('CreateUsagePlanKey');
    const failed = await run('keys', ['create', '--partner', 'stage-lab', '--scopes', Scopes.ingestResults, '--stage', 'test']);
    expect(failed.code).toBe(1);
    const keyId = /key (key_[0-9a-f]{12}) is written but NOT active/.exec(failed.err)?.[1];
    expect(keyId).toBeDefined();
    expect(failed.err).toContain(`Finish it with \`npm run keys -- resume ${keyId} --stage test\` (stopped after step gateway-key)`);
    const secret = /Its secret \(shown once, works once finished\): (\S+)/.exec(failed.err)?.[1] ?? '';
    expect(await store().findKeyById(keyId!)).toMatchObject({ status: 'pending', gatewayKeyId: 'gw1', step: 'gateway-key' });
    expect(await postResult(secret, 'STG')).toBe(401);

    const resumed = await run('keys', ['resume', keyId!, '--stage', 'test']);
    expect(resumed).toMatchObject({ code: 0, out: `active ${keyId}\n` });
    expect(resumed.err).toContain('usage plan plan-high-222 (high): key attached');
    expect(apiGateway.commandCalls(CreateApiKeyCommand)).toHaveLength(1);
    expect(apiGateway.commandCalls(CreateUsagePlanKeyCommand)).toHaveLength(2);
    expect(await postResult(secret, 'STG')).toBe(200);
    // a finished key: resume changes nothing
    const again = await run('keys', ['resume', keyId!, '--stage', 'test']);
    expect(again).toMatchObject({ code: 0, err: expect.stringContaining('every step done; nothing to finish') });
    // a record written before steps were recorded (pending, gateway key made): the gateway key is found, and attaching twice (ConflictException) counts as done
    await store().updateKey((await store().findKeyById(keyId!))!.keyHash, { status: 'pending', step: 'written' });
    const legacy = await run('keys', ['resume', keyId!, '--stage', 'test']);
    expect(legacy.err).toContain('API Gateway key gw1: exists');
    expect(legacy.err).toContain('key was attached already');
    expect(apiGateway.commandCalls(CreateApiKeyCommand)).toHaveLength(1);
  });

  it('a stage that is not deployed, an unknown partner, or an inbox scope for an external partner: one line, exit 1, nothing written', async () => {
    const before = (await store().listKeys()).length;
    ssm.on(GetParameterCommand).rejects(Object.assign(new Error('not found'), { name: 'ParameterNotFound' }));
    const noStage = await run('keys', ['create', '--partner', 'stage-lab', '--scopes', Scopes.ingestResults, '--stage', 'test']);
    expect(noStage.code).toBe(1);
    expect(noStage.err.trim().split('\n').pop()).toMatch(/has no usage plan for tier high .*deploy the stack first/);
    const unknown = await run('keys', ['create', '--partner', 'nobody', '--scopes', Scopes.ingestResults, '--stage', 'test']);
    expect(unknown).toMatchObject({ code: 1, err: expect.stringContaining('unknown partner nobody') });
    const inbox = await run('keys', ['create', '--partner', 'stage-lab', '--scopes', Scopes.inboxReview]);
    expect(inbox.code).toBe(1);
    expect(inbox.err).toContain("for the clinic's own staff only");
    expect((await store().listKeys()).length).toBe(before);
    expect(apiGateway.commandCalls(CreateApiKeyCommand)).toHaveLength(0);
  });
});

describe('rotation is resumable at every step (a fault injected at each, then the same command again)', () => {
  const DAY = 24 * 3600_000;
  const started = new Date();
  const later = new Date(started.getTime() + 3600_000);
  const partnerId = 'rotate-lab';

  beforeAll(async () => {
    expect((await run('partners', ['create', partnerId, '--tier', 'high', '--sender-id', 'ROT', '--stage', 'test'])).code).toBe(0);
  });
  afterEach(() => jest.restoreAllMocks());

  async function activeKey(): Promise<string> {
    const created = await run('keys', ['create', '--partner', partnerId, '--scopes', Scopes.ingestResults, '--stage', 'test'], { now: () => started });
    expect(created.code).toBe(0);
    return keyIdOf(created);
  }

  /** The end state of a rotation of `oldId`, without what differs by nature (ids, hashes, times of writing). */
  async function endState(oldId: string) {
    const keys = (await store().listKeys()).filter((k) => k.keyId === oldId || k.replaces === oldId);
    const old = keys.find((k) => k.keyId === oldId)!;
    const successors = keys.filter((k) => k.replaces === oldId);
    const fresh = successors[0]!;
    const gatewayOf = (keyId: string) => gatewayKeys.filter((g) => g.name === keyId).map((g) => ({ value: g.value, enabled: g.enabled }));
    const plansOf = (gatewayKeyId: string | undefined) => [...attachments].filter((a) => a.endsWith(`:${gatewayKeyId}`)).map((a) => a.split(':')[0]);
    return {
      successors: successors.length,
      old: { status: old.status, expiresAt: old.expiresAt, replacedBy: old.replacedBy === fresh.keyId, gatewayKeys: gatewayOf(oldId).length },
      fresh: {
        status: fresh.status,
        step: fresh.step,
        tier: fresh.tier,
        scopes: fresh.scopes,
        replacesUntil: fresh.replacesUntil,
        gatewayKeys: gatewayOf(fresh.keyId).map((g) => ({ ...g, value: g.value === fresh.keyHash })),
        gatewayKeyRecorded: gatewayKeys.some((g) => g.id === fresh.gatewayKeyId && g.name === fresh.keyId),
        plans: plansOf(fresh.gatewayKeyId),
      },
    };
  }

  /** the end state of a rotation that nothing interrupted (made once, inside the first test: the fakes are set up per test) */
  let uninterrupted: Awaited<ReturnType<typeof endState>> | undefined;
  beforeEach(async () => {
    if (uninterrupted) return;
    const oldId = await activeKey();
    const rotated = await run('keys', ['rotate', oldId, '--overlap', '24h', '--stage', 'test'], { now: () => started });
    expect(rotated.code).toBe(0);
    uninterrupted = await endState(oldId);
    expect(uninterrupted).toMatchObject({
      successors: 1,
      old: { status: 'active', expiresAt: new Date(started.getTime() + DAY).toISOString(), replacedBy: true },
      fresh: { status: 'active', step: 'old-key-expiring', tier: 'high', plans: [PLAN.high], gatewayKeyRecorded: true },
    });
  });

  /** Fails the nth call (1-based) of a store method once. */
  function failStoreCall(method: 'putKey' | 'updateKey', nth: number) {
    const original = ApiKeyStore.prototype[method] as (...args: unknown[]) => Promise<boolean>;
    let calls = 0;
    jest.spyOn(ApiKeyStore.prototype, method).mockImplementation(function (this: ApiKeyStore, ...args: unknown[]) {
      if (++calls === nth)
        return Promise.reject(Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ProvisionedThroughputExceededException' }));
      return original.apply(this, args);
    } as never);
  }

  // the writes of a rotation on a stage, in order: putKey (written), CreateApiKey, updateKey (gateway-key),
  // CreateUsagePlanKey, updateKey (usage-plan), updateKey (active), updateKey (the old key's end), updateKey (old-key-expiring)
  const faults: Array<[string, () => void, string | undefined]> = [
    ['the new record', () => failStoreCall('putKey', 1), undefined],
    ['CreateApiKey', () => failOnce('CreateApiKey'), 'written'],
    ['recording the gateway key', () => failStoreCall('updateKey', 1), 'written'],
    ['CreateUsagePlanKey', () => failOnce('CreateUsagePlanKey'), 'gateway-key'],
    ['recording the plan', () => failStoreCall('updateKey', 2), 'gateway-key'],
    ['activating the new key', () => failStoreCall('updateKey', 3), 'usage-plan'],
    ["the old key's end (the new key is active)", () => failStoreCall('updateKey', 4), 'active'],
    ['recording the last step', () => failStoreCall('updateKey', 5), 'active'],
  ];

  it.each(faults)('a fault at %s: exit 1, and `keys rotate <old>` again ends as an uninterrupted rotation', async (_step, inject, stoppedAfter) => {
    const oldId = await activeKey();
    inject();
    const failed = await run('keys', ['rotate', oldId, '--overlap', '24h', '--stage', 'test'], { now: () => started });
    expect(failed.code).toBe(1);
    if (stoppedAfter) {
      expect(failed.err).toContain(`(stopped after step ${stoppedAfter})`);
      expect(failed.err).toContain(`npm run keys -- rotate ${oldId} --stage test`);
      expect(failed.err).toMatch(/Its secret \(shown once[^)]*\): ik_/);
    }
    jest.restoreAllMocks();
    // an hour later: the overlap is the one the rotation started with (nothing written: the run again is the first rotation)
    const again = await run('keys', ['rotate', oldId, '--overlap', '24h', '--stage', 'test'], { now: () => (stoppedAfter ? later : started) });
    expect(again.code).toBe(0);
    if (stoppedAfter) expect(again.out).toContain('its secret was shown by the run that started the rotation');
    expect(await endState(oldId)).toEqual(uninterrupted);
    // once finished, the old key is expiring: another rotate is refused, resume changes nothing
    expect((await run('keys', ['rotate', oldId, '--stage', 'test'], { now: () => later })).code).toBe(1);
    expect((await run('keys', ['resume', oldId, '--stage', 'test'], { now: () => later })).code).toBe(0);
    expect(await endState(oldId)).toEqual(uninterrupted);
  });

  it('`keys resume <old>` finishes it too, and so does `keys resume <new>`', async () => {
    for (const which of ['old', 'new'] as const) {
      const oldId = await activeKey();
      failStoreCall('updateKey', 4);
      const failed = await run('keys', ['rotate', oldId, '--overlap', '24h', '--stage', 'test'], { now: () => started });
      expect(failed.code).toBe(1);
      expect(failed.err).toContain(`the old key ${oldId} has no end yet`);
      jest.restoreAllMocks();
      const newId = /key (key_[0-9a-f]{12}) is active/.exec(failed.err)![1]!;
      const resumed = await run('keys', ['resume', which === 'old' ? oldId : newId, '--stage', 'test'], { now: () => later });
      expect(resumed.code).toBe(0);
      expect(await endState(oldId)).toEqual(uninterrupted);
    }
  });

  it('a discarded (revoked) unfinished new key: rotate starts a fresh rotation', async () => {
    const oldId = await activeKey();
    failOnce('CreateUsagePlanKey');
    const failed = await run('keys', ['rotate', oldId, '--overlap', '24h', '--stage', 'test'], { now: () => started });
    const newId = /key (key_[0-9a-f]{12}) is written but NOT active/.exec(failed.err)![1]!;
    expect((await run('keys', ['revoke', newId, '--stage', 'test'])).code).toBe(0);
    expect(gatewayKeys.some((g) => g.name === newId)).toBe(false);
    const fresh = await run('keys', ['rotate', oldId, '--overlap', '24h', '--stage', 'test'], { now: () => started });
    expect(fresh.code).toBe(0);
    expect(keyIdOf(fresh)).not.toBe(newId);
    expect((await store().findKeyById(oldId))?.replacedBy).toBe(keyIdOf(fresh));
  });
});

describe('revoke-expired deletes API Gateway keys, and keys move --tier', () => {
  beforeAll(async () => {
    expect((await run('partners', ['create', 'expiry-lab', '--tier', 'standard', '--sender-id', 'EXP', '--stage', 'test'])).code).toBe(0);
  });

  it('revoke-expired on a stage: the expired key revoked and its gateway key deleted; gateway keys of keys revoked earlier are deleted too; again: nothing', async () => {
    const t0 = new Date();
    const created = await run('keys', ['create', '--partner', 'expiry-lab', '--scopes', Scopes.ingestResults, '--stage', 'test'], { now: () => t0 });
    const oldId = keyIdOf(created);
    const rotated = await run('keys', ['rotate', oldId, '--overlap', '1h', '--stage', 'test'], { now: () => t0 });
    expect(rotated.code).toBe(0);
    // a key revoked before revoke deleted gateway keys: revoked, gateway key still there
    const earlier = keyIdOf(await run('keys', ['create', '--partner', 'expiry-lab', '--scopes', Scopes.ingestResults, '--stage', 'test'], { now: () => t0 }));
    const earlierRecord = (await store().findKeyById(earlier))!;
    await store().updateKey(earlierRecord.keyHash, { status: 'revoked', revokedAt: t0.toISOString() });
    const before = gatewayKeys.length;

    const notYet = await run('keys', ['revoke-expired', '--stage', 'test'], { now: () => new Date(t0.getTime() + 30 * 60_000) });
    expect(notYet.out).toContain('no expired keys');
    expect(notYet.out).toContain(`deleted the API Gateway keys of revoked`);
    expect(gatewayKeys.some((g) => g.name === earlier)).toBe(false);

    const swept = await run('keys', ['revoke-expired', '--stage', 'test'], { now: () => new Date(t0.getTime() + 2 * 3600_000) });
    expect(swept).toMatchObject({ code: 0, out: expect.stringMatching(new RegExp(`^revoked .*${oldId}`)) });
    expect(await store().findKeyById(oldId)).toMatchObject({ status: 'revoked', gatewayKeyDeletedAt: expect.any(String) });
    expect(gatewayKeys.some((g) => g.name === oldId)).toBe(false);
    expect(gatewayKeys.some((g) => g.name === keyIdOf(rotated))).toBe(true);
    expect(gatewayKeys.length).toBe(before - 2);
    const deletes = apiGateway.commandCalls(DeleteApiKeyCommand).length;
    const again = await run('keys', ['revoke-expired', '--stage', 'test'], { now: () => new Date(t0.getTime() + 3 * 3600_000) });
    expect(again.out).toBe('no expired keys\n');
    expect(apiGateway.commandCalls(DeleteApiKeyCommand)).toHaveLength(deletes);
  });

  it('a gateway key deleted by hand meanwhile (NotFoundException) counts as deleted', async () => {
    const keyId = keyIdOf(await run('keys', ['create', '--partner', 'expiry-lab', '--scopes', Scopes.ingestResults, '--stage', 'test']));
    gatewayKeys.splice(
      gatewayKeys.findIndex((g) => g.name === keyId),
      1,
    );
    const revoked = await run('keys', ['revoke', keyId, '--stage', 'test']);
    expect(revoked).toMatchObject({ code: 0, err: expect.stringContaining('gone already') });
    expect(await store().findKeyById(keyId)).toMatchObject({ status: 'revoked', gatewayKeyDeletedAt: expect.any(String) });
  });

  it('move --tier: off the other plan, onto the tier plan, tier recorded and audited; again: nothing changes; stopped half-way: again finishes it', async () => {
    const keyId = keyIdOf(await run('keys', ['create', '--partner', 'expiry-lab', '--scopes', Scopes.ingestResults, '--stage', 'test']));
    const gw = (await store().findKeyById(keyId))!.gatewayKeyId!;
    expect([...attachments].filter((a) => a.endsWith(`:${gw}`))).toEqual([`${PLAN.standard}:${gw}`]);

    failOnce('CreateUsagePlanKey');
    const failed = await run('keys', ['move', keyId, '--tier', 'high', '--stage', 'test']);
    expect(failed.code).toBe(1);
    expect(failed.err.trim().split('\n').pop()).toMatch(/TooManyRequestsException/);
    expect((await store().findKeyById(keyId))?.tier).toBe('standard');

    const moved = await run('keys', ['move', keyId, '--tier', 'high', '--stage', 'test']);
    expect(moved).toMatchObject({ code: 0, out: `moved ${keyId}: tier standard -> high\n` });
    expect([...attachments].filter((a) => a.endsWith(`:${gw}`))).toEqual([`${PLAN.high}:${gw}`]);
    expect((await store().findKeyById(keyId))?.tier).toBe('high');
    const again = await run('keys', ['move', keyId, '--tier', 'high', '--stage', 'test']);
    expect(again).toMatchObject({ code: 0, out: `${keyId} is on tier high (nothing changed)\n` });
    expect([...attachments].filter((a) => a.endsWith(`:${gw}`))).toEqual([`${PLAN.high}:${gw}`]);
    const trail = await new AuditTrailReader(dynamoDbClient(), stack.tables.audit).forResource('key', keyId);
    expect(trail.filter((r) => r.action === 'admin.key.move')).toEqual([
      expect.objectContaining({
        partnerId: 'expiry-lab',
        keyId,
        operator: expect.any(String),
        changes: [{ field: 'tier', before: 'standard', after: 'high' }],
      }),
    ]);
  });

  it('move on the local stack records the tier; usage: --tier missing or unknown is exit 2; a revoked key is refused', async () => {
    await run('partners', ['create', 'move-local', '--tier', 'standard']);
    const keyId = keyIdOf(await run('keys', ['create', '--partner', 'move-local', '--scopes', Scopes.ingestResults]));
    expect(await run('keys', ['move', keyId, '--tier', 'high'])).toMatchObject({ code: 0, out: `moved ${keyId}: tier standard -> high\n` });
    expect((await store().findKeyById(keyId))?.tier).toBe('high');
    for (const argv of [
      ['move', keyId],
      ['move', keyId, '--tier', 'gold'],
      ['move', '--tier', 'high'],
    ]) {
      const r = await run('keys', argv);
      expect({ argv, code: r.code, lines: r.err.trim().split('\n').length }).toEqual({ argv, code: 2, lines: 1 });
    }
    await run('keys', ['revoke', keyId]);
    expect(await run('keys', ['move', keyId, '--tier', 'standard'])).toMatchObject({
      code: 1,
      err: expect.stringContaining(`\nkey ${keyId} is revoked; nothing to move\n`),
    });
    expect(apiGateway.calls()).toHaveLength(0);
  });
});

describe('staff-only inbox scope', () => {
  it('an internal partner gets an inbox key; a hand-written inbox key of an external partner is refused 403 at request time', async () => {
    await run('partners', ['create', 'acme-staff', '--tier', 'standard', '--kind', 'internal']);
    const staff = await run('keys', ['create', '--partner', 'acme-staff', '--scopes', Scopes.inboxReview]);
    expect(staff.code).toBe(0);
    const ok = await call(stack, 'GET', '/interopInbox', { headers: { 'x-api-key': secretOf(staff) } });
    expect(ok.status).toBe(200);

    const secret = 'ik_hand_written_external_inbox_key';
    const keyHash = sha256(secret);
    await store().putKey({
      keyHash,
      keyId: `key_${keyHash.slice(0, 12)}`,
      partnerId: 'demo-lab',
      label: 'by hand',
      scopes: [Scopes.inboxReview],
      status: 'active',
      createdAt: new Date().toISOString(),
    });
    const refused = await call(stack, 'GET', '/interopInbox', { headers: { 'x-api-key': secret } });
    expect(refused.status).toBe(403);
    expect(refused.json().detail).toContain("for the clinic's own staff");
  });
});

describe('the command line', () => {
  it.each([
    [['create', '--partner', 'acme-lab', '--scopes', Scopes.ingestResults, '--rate-limit', 'abc'], /--rate-limit must be a whole number, got "abc"/],
    [['create', '--partner', 'acme-lab', '--scopes', Scopes.ingestResults, '--rate-limit', '1.5'], /--rate-limit must be a whole number, got "1.5"/],
    [['create', '--partner', 'acme-lab', '--scopes', Scopes.ingestResults, '--rate-limit', '0'], /--rate-limit must be between 1 and/],
    [['create', '--partner', 'acme-lab', '--scopes', Scopes.ingestResults, '--rate-limit', '10', '--window', '0'], /--window must be between 1 and/],
    [['create', '--partner', 'acme-lab', '--scopes', 'interop:everything'], /unknown scope interop:everything/],
    [['create', '--partner', 'acme-lab', '--scopes', Scopes.ingestResults, '--tier', 'gold'], /--tier must be standard or high/],
    [['create', '--partner', 'acme-lab', '--bogus'], /Unknown option '--bogus'/],
    [['rotate', 'key_0123456789ab', '--overlap', 'soon'], /--overlap must be a duration/],
    [['revoke', 'not-a-key'], /is not a key id/],
  ])('keys %j -> exit 2 with one line', async (argv, message) => {
    const before = (await store().listKeys()).length;
    const r = await run('keys', argv as string[]);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(message);
    expect((await store().listKeys()).length).toBe(before);
  });

  it('--help lists every option with an example, for every command of both tools', async () => {
    for (const tool of ['keys', 'partners'] as const) {
      const top = await run(tool, ['--help']);
      expect(top.code).toBe(0);
      const commands = [...top.out.matchAll(/^ {2}([a-z-]+)(?: <\w+>)? {2,}/gm)].map((m) => m[1]!);
      expect(commands.length).toBeGreaterThanOrEqual(5);
      for (const command of commands) {
        const help = await run(tool, [command, '--help']);
        expect(help.code).toBe(0);
        expect(help.out).toContain('Examples:');
        expect(help.out).toContain(`npm run ${tool} -- ${command}`);
        expect(help.out).toContain('--stage NAME');
      }
    }
  });

  it('list has a header row, and --json', async () => {
    const text = await run('keys', ['list']);
    expect(text.out.split('\n')[0]).toMatch(/^KEY ID\s+STATE\s+PARTNER\s+TIER\s+SCOPES/);
    expect(text.out).not.toContain('keyHash');
    const json = JSON.parse((await run('keys', ['list', '--json'])).out) as Array<Record<string, unknown>>;
    expect(json.length).toBeGreaterThan(0);
    expect(json.every((k) => !('keyHash' in k) && typeof k.state === 'string')).toBe(true);
    const partners = await run('partners', ['list']);
    expect(partners.out.split('\n')[0]).toMatch(/^PARTNER\s+POLICY\s+KIND\s+TIER/);
    expect(JSON.parse((await run('partners', ['list', '--json'])).out)).toEqual(
      expect.arrayContaining([expect.objectContaining({ partnerId: 'demo-staff', kind: 'internal' })]),
    );
  });

  it('block / unblock are idempotent and take effect on the next request', async () => {
    expect((await run('partners', ['block', 'demo-lab'])).out).toContain('active -> blocked');
    expect((await run('partners', ['block', 'demo-lab'])).out).toContain('blocked already');
    expect(await postResult('demo-results-key', 'demo-lab')).toBe(403);
    expect((await run('partners', ['unblock', 'demo-lab'])).out).toContain('blocked -> active');
    expect(await postResult('demo-results-key', 'demo-lab')).toBe(200);
    expect(await run('partners', ['show', 'nobody'])).toMatchObject({ code: 1, err: 'unknown partner nobody\n' });
  });

  it('a local stack that is not running: "run `npm start` first", not a bare ECONNREFUSED', async () => {
    const closed = new DynamoDBClient({
      endpoint: 'http://127.0.0.1:1',
      region: 'us-east-1',
      maxAttempts: 1,
      credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
    });
    const target = {
      description: 'local stack',
      store: new ApiKeyStore(closed, 'interop-local-api-keys'),
      auditTrail: new AuditTrail(closed, 'interop-local-audit'),
      chart: { db: closed, table: 'interop-local-chart', patients: new ChartItemReader(closed, 'interop-local-chart') },
    };
    const r = await run('keys', ['list'], { target: () => target });
    expect(r).toMatchObject({
      code: 1,
      err: `${LOCAL_STACK_NOT_RUNNING}\n`,
    });
    expect(
      explainTargetFailure(Object.assign(new Error('Could not load credentials from any providers'), { name: 'CredentialsProviderError' }), {
        description: 'stage prod (eu-west-1)',
        stage: 'prod',
      }),
    ).toMatch(/^no AWS credentials for stage prod/);
  });
});
