/**
 * The access rule against dynalite (real DynamoDB calls, counted by a middleware that only looks):
 * one DynamoDB call per authorized request in steady state, and the staleness bound of the
 * container's key and partner records, with the request clock injected (no waiting).
 */
import { startLocalDynamoDb, type LocalDynamoDb } from '../chart/testing/local-dynamodb';
import { Scopes } from '../config/service';
import { AccessOutcomes, decideAccess, type AnonymousLimit } from './access-decision';
import { CachedAccessRecords, MAX_ACCESS_RECORD_AGE_SECONDS } from './access-records';
import { hashApiKey, keyIdFromHash, type ApiKeyRecord, type PartnerRecord } from './api-key';
import { ApiKeyStore } from './api-key-store';
import { SlidingWindowRateLimiter } from './rate-limiter';
import { countingDynamoDbClient, type CountingClient } from './testing/counting-client';

let local: LocalDynamoDb;
let counting: CountingClient;
let tables: Awaited<ReturnType<LocalDynamoDb['createTables']>>;
let admin: ApiKeyStore;
const anonymous: AnonymousLimit = { limit: 1000, windowSeconds: 60 };
const BOUND_MS = MAX_ACCESS_RECORD_AGE_SECONDS * 1000;
let n = 0;

beforeAll(async () => {
  local = await startLocalDynamoDb();
  tables = await local.createTables('access-decision-test');
  counting = countingDynamoDbClient(local.endpoint);
  admin = new ApiKeyStore(local.db, tables.keys);
});
afterAll(async () => {
  counting?.db.destroy();
  await local?.stop();
});

/** A container: its own record cache and limiter, on the counting client. */
function container(maxAgeSeconds = MAX_ACCESS_RECORD_AGE_SECONDS) {
  return {
    keys: new CachedAccessRecords(new ApiKeyStore(counting.db, tables.keys), maxAgeSeconds),
    limiter: new SlidingWindowRateLimiter(counting.db, tables.rateLimit),
    anonymous,
  };
}

async function partnerWithKey(overrides: Partial<ApiKeyRecord> = {}) {
  const partnerId = `partner-${++n}`;
  const secret = `secret-${n}-access-decision-test-key`;
  const keyHash = hashApiKey(secret);
  const partner: PartnerRecord = { partnerId, name: partnerId, policy: 'active', rateLimit: 1000, rateWindowSeconds: 60, allowedSenderIds: [] };
  await admin.putPartner(partner);
  await admin.putKey({
    keyHash,
    keyId: keyIdFromHash(keyHash),
    partnerId,
    label: 'test',
    scopes: [Scopes.exportHl7],
    status: 'active',
    createdAt: new Date(0).toISOString(),
    ...overrides,
  });
  return { partnerId, secret, keyHash };
}

const t0 = Date.UTC(2026, 10, 26, 4, 0, 0);
const at = (ms: number) => new Date(t0 + ms);
const ask = (deps: ReturnType<typeof container>, secret: string, now: Date) =>
  decideAccess({ apiKeys: [secret], sourceIp: '192.0.2.1', requiredScope: Scopes.exportHl7, now }, deps);

describe('decideAccess: DynamoDB calls per request', () => {
  it('steady state: one call (the limiter UpdateItem) per authorized request; the first pays the reads', async () => {
    const { secret } = await partnerWithKey();
    const deps = container();
    counting.reset();
    expect((await ask(deps, secret, at(0))).outcome).toBe(AccessOutcomes.allow);
    const first = [...counting.calls];
    const perRequest: number[] = [];
    for (let i = 1; i <= 200; i++) {
      counting.reset();
      // 200 requests over 9.95 s: inside the record bound, across ten limiter slot changes
      expect((await ask(deps, secret, at(i * 49.75))).outcome).toBe(AccessOutcomes.allow);
      perRequest.push(counting.calls.length);
      if (counting.calls.some((c) => c !== 'UpdateItemCommand')) throw new Error(`request ${i}: ${counting.calls.join(', ')}`);
    }
    expect(first).toEqual(['GetItemCommand', 'GetItemCommand', 'GetItemCommand', 'UpdateItemCommand']);
    expect(perRequest.every((c) => c === 1)).toBe(true);
  });

  it('an unknown key repeated costs one call per request too (the anonymous counter), not a key read each time', async () => {
    const deps = container();
    await ask(deps, 'no-such-key-access-decision-test', at(0));
    counting.reset();
    for (let i = 1; i <= 20; i++) expect((await ask(deps, 'no-such-key-access-decision-test', at(i * 100))).outcome).toBe(AccessOutcomes.unauthenticated);
    expect(counting.calls).toEqual(Array.from({ length: 20 }, () => 'UpdateItemCommand'));
  });

  it('two containers on one key: one call per request, plus at most 2 per container per slot change', async () => {
    const { secret } = await partnerWithKey();
    const a = container();
    const b = container();
    await ask(a, secret, at(0));
    await ask(b, secret, at(0));
    counting.reset();
    for (let i = 1; i <= 100; i++) {
      await ask(a, secret, at(i * 90));
      await ask(b, secret, at(i * 90 + 10));
    }
    // 200 requests over 9 s (1 s slots: 9 slot changes); at a slot change each container's
    // remembered item is behind the other's last write: one failed UpdateItem, one GetItem
    const updates = counting.calls.filter((c) => c === 'UpdateItemCommand').length;
    const reads = counting.calls.filter((c) => c === 'GetItemCommand').length;
    expect(updates - reads).toBe(200);
    expect(reads).toBeLessThanOrEqual(2 * 10);
  });
});

describe('decideAccess: changes take effect within the bound', () => {
  it(`revocation: allowed from the container's record inside ${MAX_ACCESS_RECORD_AGE_SECONDS} s, 401 revoked at the bound and after`, async () => {
    const { secret, keyHash } = await partnerWithKey();
    const deps = container();
    expect((await ask(deps, secret, at(0))).outcome).toBe(AccessOutcomes.allow);
    expect(await admin.revokeKey(keyHash, at(1000))).toBe(true);
    // the record read at t0 may still answer until t0 + bound (documented)
    expect((await ask(deps, secret, at(BOUND_MS - 1))).outcome).toBe(AccessOutcomes.allow);
    // every request at revocation + bound or later is refused (1 s after t0 + bound here)
    for (const ms of [BOUND_MS, 1000 + BOUND_MS, 1000 + BOUND_MS + 1, 60_000]) {
      const decision = await ask(deps, secret, at(ms));
      expect(decision.outcome).toBe(AccessOutcomes.unauthenticated);
      expect(decision.reason).toMatch(/revoked/);
    }
  });

  it('a container that first sees the key after the revocation refuses it at once', async () => {
    const { secret, keyHash } = await partnerWithKey();
    await admin.revokeKey(keyHash, at(0));
    expect((await ask(container(), secret, at(1))).outcome).toBe(AccessOutcomes.unauthenticated);
  });

  it('blocking the partner: 403 for every request at the block + bound or later', async () => {
    const { secret, partnerId } = await partnerWithKey();
    const deps = container();
    expect((await ask(deps, secret, at(0))).outcome).toBe(AccessOutcomes.allow);
    await admin.setPartnerPolicy(partnerId, 'blocked');
    const after = await ask(deps, secret, at(BOUND_MS));
    expect(after.outcome).toBe(AccessOutcomes.forbidden);
    expect(after.reason).toMatch(/blocked/);
  });

  it('rotation: the old key is refused from its expiresAt on, whatever the container holds', async () => {
    const { secret, keyHash } = await partnerWithKey();
    const deps = container();
    expect((await ask(deps, secret, at(0))).outcome).toBe(AccessOutcomes.allow);
    await admin.updateKey(keyHash, { expiresAt: at(2000).toISOString() });
    // within the bound the container may still hold the record without expiresAt ...
    expect((await ask(deps, secret, at(1000))).outcome).toBe(AccessOutcomes.allow);
    // ... and at the bound it has reloaded it: refused (the overlap ended at +2 s)
    const after = await ask(deps, secret, at(BOUND_MS));
    expect(after.outcome).toBe(AccessOutcomes.unauthenticated);
    expect(after.reason).toMatch(/expired/);
  });

  it('a clock that went backwards reloads; max age 0 reads on every request', async () => {
    const { secret, keyHash } = await partnerWithKey();
    const deps = container();
    await ask(deps, secret, at(5000));
    await admin.revokeKey(keyHash, at(5001));
    expect((await ask(deps, secret, at(4000))).outcome).toBe(AccessOutcomes.unauthenticated);

    const other = await partnerWithKey();
    const uncached = container(0);
    expect((await ask(uncached, other.secret, at(0))).outcome).toBe(AccessOutcomes.allow);
    await admin.revokeKey(other.keyHash, at(1));
    expect((await ask(uncached, other.secret, at(2))).outcome).toBe(AccessOutcomes.unauthenticated);
  });

  it('the bound is clamped to 10 s whatever is asked for', () => {
    expect(new CachedAccessRecords(admin, 3600).maxAgeMs).toBe(BOUND_MS);
    expect(new CachedAccessRecords(admin, -1).maxAgeMs).toBe(0);
  });
});
