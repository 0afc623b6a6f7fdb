/**
 * The container's authority owners (lib/keys/access-records.ts CachedAuthorityOwners) against
 * dynalite, calls counted by a middleware that only looks, the clock injected (no waiting): one
 * GetItem per authority per bound, and a claim or release seen by every lookup at the bound or later.
 */
import { startLocalDynamoDb, type LocalDynamoDb } from '../chart/testing/local-dynamodb';
import { CachedAuthorityOwners, MAX_ACCESS_RECORD_AGE_SECONDS } from './access-records';
import { ApiKeyStore } from './api-key-store';
import { IdentityClaimStore } from './identity-claims';
import { countingDynamoDbClient, type CountingClient } from './testing/counting-client';

let local: LocalDynamoDb;
let counting: CountingClient;
let admin: IdentityClaimStore;
let table: string;
const BOUND_MS = MAX_ACCESS_RECORD_AGE_SECONDS * 1000;
const t0 = Date.UTC(2026, 10, 26, 5, 0, 0);
const at = (ms: number) => new Date(t0 + ms);

beforeAll(async () => {
  local = await startLocalDynamoDb();
  table = (await local.createTables('authority-owners-test')).keys;
  counting = countingDynamoDbClient(local.endpoint);
  admin = new IdentityClaimStore(local.db, table);
});
afterAll(async () => {
  counting?.db.destroy();
  await local?.stop();
});
beforeEach(() => counting.reset());

const owners = (maxAgeSeconds = MAX_ACCESS_RECORD_AGE_SECONDS) => new CachedAuthorityOwners(new ApiKeyStore(counting.db, table), maxAgeSeconds);

describe('CachedAuthorityOwners', () => {
  it('one GetItem per authority within the bound, whatever its spelling', async () => {
    await admin.claim('authority', 'ACME-LAB', 'acme', at(0));
    const cache = owners();
    expect(await cache.ownerOf('ACME-LAB', at(0))).toBe('acme');
    expect(await cache.ownerOf(' acme-lab ', at(1000))).toBe('acme');
    expect(await cache.ownerOf('ACME-LAB', at(BOUND_MS - 1))).toBe('acme');
    expect(await cache.ownerOf('NOBODY-AA', at(0))).toBeUndefined();
    expect(await cache.ownerOf('NOBODY-AA', at(5000))).toBeUndefined();
    expect(counting.calls).toEqual(['GetItemCommand', 'GetItemCommand']);
  });

  it('a claim and a release are seen by every lookup at the bound or later', async () => {
    const cache = owners();
    expect(await cache.ownerOf('LATE-AA', at(0))).toBeUndefined();
    await admin.claim('authority', 'LATE-AA', 'late', at(1));
    expect(await cache.ownerOf('LATE-AA', at(BOUND_MS - 1))).toBeUndefined();
    expect(await cache.ownerOf('LATE-AA', at(BOUND_MS))).toBe('late');
    expect(await admin.release('authority', 'LATE-AA', 'late')).toBe(true);
    expect(await cache.ownerOf('LATE-AA', at(2 * BOUND_MS - 1))).toBe('late');
    expect(await cache.ownerOf('LATE-AA', at(2 * BOUND_MS))).toBeUndefined();
  });

  it('bound 0 (the test suites) reads on every lookup; a bound above 10 s is held to 10 s', async () => {
    await admin.claim('authority', 'ZERO-AA', 'zero', at(0));
    const cache = owners(0);
    await cache.ownerOf('ZERO-AA', at(0));
    await cache.ownerOf('ZERO-AA', at(0));
    expect(counting.calls).toEqual(['GetItemCommand', 'GetItemCommand']);
    counting.reset();
    const long = owners(3600);
    await long.ownerOf('ZERO-AA', at(0));
    await long.ownerOf('ZERO-AA', at(BOUND_MS));
    expect(counting.calls).toEqual(['GetItemCommand', 'GetItemCommand']);
  });
});
