/**
 * PartnerAdmin and identity claims (lib/keys/identity-claims.ts) against dynalite: every assigning
 * authority, sender id and form source a partner lists has one owner (second-partner probe F1: a
 * second partner listing the first one's sender id rewrote its lab results). Refusals change
 * nothing; claims made by a refused or failed call are released; `claimsReport` / `repairClaims`
 * bring a deployment from before sender and form source claims to one owner per id. Faults are
 * injected with a client middleware that throws for one item (the only mock).
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { startLocalDynamoDb, type LocalDynamoDb } from '../chart/testing/local-dynamodb';
import type { PartnerRecord } from '../keys/api-key';
import { ApiKeyStore } from '../keys/api-key-store';
import { IdentityClaimStore, type IdentityKind } from '../keys/identity-claims';
import { AdminActions, type AdminAuditEvent } from './admin-audit';
import { AdminError } from './key-admin';
import { PartnerAdmin, type CreatePartnerRequest } from './partner-admin';

let local: LocalDynamoDb;
let table: string;
let store: ApiKeyStore;
let claims: IdentityClaimStore;
let admin: PartnerAdmin;
const now = new Date(Date.UTC(2026, 10, 26, 14, 0, 0));

beforeAll(async () => {
  local = await startLocalDynamoDb();
  table = (await local.createTables('partner-admin-test')).keys;
  store = new ApiKeyStore(local.db, table);
  claims = new IdentityClaimStore(local.db, table);
  admin = new PartnerAdmin(store);
});
afterAll(async () => local?.stop());

const request = (partnerId: string, lists: Partial<CreatePartnerRequest> = {}): CreatePartnerRequest => ({
  partnerId,
  tier: 'standard',
  kind: 'external',
  senderIds: [],
  ...lists,
});
const owner = (kind: IdentityKind, id: string) => claims.owner(kind, id);
const claimsOf = async (partnerId: string) => (await claims.list()).filter((c) => c.partnerId === partnerId).map((c) => `${c.kind} ${c.id}`);
const refusal = async (work: Promise<unknown>): Promise<string> => {
  const error = await work.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AdminError);
  return (error as Error).message;
};

/** A client for the same table whose `command` of the item `pk` throws an internal error (nothing is sent). */
function faultyAdmin(command: string, pk: string): PartnerAdmin {
  const db = new DynamoDBClient({
    endpoint: local.endpoint,
    region: 'us-east-1',
    credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    maxAttempts: 1,
  });
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as { Key?: { pk?: { S?: string } }; Item?: { pk?: { S?: string } } };
      if (context.commandName === command && (input.Key?.pk?.S ?? input.Item?.pk?.S) === pk)
        throw Object.assign(new Error('injected fault'), { name: 'InternalServerError' });
      return next(args);
    },
    { step: 'initialize', name: 'injectFault' },
  );
  return new PartnerAdmin(new ApiKeyStore(db, table));
}

describe('create', () => {
  beforeAll(async () => {
    await admin.create(
      request('first-lab', { senderIds: ['FIRST-LIS', 'first-lab'], formSourceIds: ['first-forms'], assigningAuthorities: ['FIRST-AA'] }),
      now,
    );
  });

  it('claims every authority, sender id and form source (trimmed, upper case) before the partner is written', async () => {
    expect((await claimsOf('first-lab')).sort()).toEqual(['authority FIRST-AA', 'formSource FIRST-FORMS', 'sender FIRST-LAB', 'sender FIRST-LIS']);
    expect((await store.getPartner('first-lab'))?.allowedSenderIds).toEqual(['FIRST-LIS', 'first-lab']);
  });

  it("refuses another partner's sender id in any spelling, names the owner, and writes nothing (its own claims made first are released)", async () => {
    for (const senderId of ['FIRST-LIS', ' first-lis', 'First-Lis']) {
      const message = await refusal(
        admin.create(request('second-lab', { senderIds: ['SECOND-LIS', senderId], formSourceIds: ['second-forms'], assigningAuthorities: ['SECOND-AA'] }), now),
      );
      expect(message).toBe('sender id FIRST-LIS is owned by partner first-lab; a sender id has one owner (compared trimmed and without case); nothing changed');
    }
    expect(await store.getPartner('second-lab')).toBeUndefined();
    expect(await claimsOf('second-lab')).toEqual([]);
    expect(await owner('sender', 'FIRST-LIS')).toBe('first-lab');
  });

  it("refuses another partner's form source, and writes nothing", async () => {
    const message = await refusal(admin.create(request('second-forms', { formSourceIds: ['own-forms', 'FIRST-FORMS'] }), now));
    expect(message).toBe(
      'form source FIRST-FORMS is owned by partner first-lab; a form source has one owner (compared trimmed and without case); nothing changed',
    );
    expect(await store.getPartner('second-forms')).toBeUndefined();
    expect(await owner('formSource', 'own-forms')).toBeUndefined();
  });

  it('refuses the wildcard and ids intake could never match, before anything is written', async () => {
    expect(await refusal(admin.create(request('wild-lab', { senderIds: ['*'] }), now))).toContain('a sender id cannot be the wildcard "*"');
    expect(await refusal(admin.create(request('wild-forms', { formSourceIds: ['ok', '*'] }), now))).toContain('a form source cannot be the wildcard "*"');
    expect(await refusal(admin.create(request('space-forms', { formSourceIds: ['two words'] }), now))).toContain('--form-source must be');
    expect(await refusal(admin.create(request('long-lab', { senderIds: ['X'.repeat(129)] }), now))).toContain('--sender-id must be');
    for (const id of ['wild-lab', 'wild-forms', 'space-forms', 'long-lab']) expect(await store.getPartner(id)).toBeUndefined();
    expect(await owner('formSource', 'OK')).toBeUndefined();
  });

  it('is idempotent: the same settings again are `exists` and make a missing claim again', async () => {
    expect(await claims.release('sender', 'first-lab', 'first-lab')).toBe(true);
    const again = await admin.create(
      request('first-lab', { senderIds: ['first-lab', 'FIRST-LIS'], formSourceIds: ['first-forms'], assigningAuthorities: ['first-aa'] }),
      now,
    );
    expect(again.outcome).toBe('exists');
    expect(await owner('sender', 'FIRST-LAB')).toBe('first-lab');
    expect((await claimsOf('first-lab')).length).toBe(4);
  });

  it('a partner write that fails releases the claims this call made (nothing half-written)', async () => {
    const faulty = faultyAdmin('PutItemCommand', 'PARTNER#fault-lab');
    await expect(
      faulty.create(request('fault-lab', { senderIds: ['FAULT-LIS'], formSourceIds: ['fault-forms'], assigningAuthorities: ['FAULT-AA'] }), now),
    ).rejects.toThrow('injected fault');
    expect(await store.getPartner('fault-lab')).toBeUndefined();
    expect(await claimsOf('fault-lab')).toEqual([]);
  });

  it('a claim that fails midway releases the claims made before it', async () => {
    const faulty = faultyAdmin('PutItemCommand', 'FORMSOURCE#MID-FORMS');
    await expect(
      faulty.create(request('mid-lab', { senderIds: ['MID-LIS'], formSourceIds: ['mid-forms'], assigningAuthorities: ['MID-AA'] }), now),
    ).rejects.toThrow('injected fault');
    expect(await store.getPartner('mid-lab')).toBeUndefined();
    expect(await claimsOf('mid-lab')).toEqual([]);
  });
});

describe('update', () => {
  beforeAll(async () => {
    await admin.create(request('upd-lab', { senderIds: ['UPD-1', 'upd-1b'], formSourceIds: ['upd-forms'] }), now);
    await admin.create(request('other-lab', { senderIds: ['OTHER-LIS'], formSourceIds: ['other-forms'] }), now);
  });

  it('claims added ids, releases dropped ones (another partner may then have them), keeps a claim another spelling still lists', async () => {
    const result = await admin.update({ partnerId: 'upd-lab', senderIds: ['upd-1', 'UPD-2'], formSourceIds: [] }, now);
    expect(result.claims).toEqual({
      claimed: [{ kind: 'sender', id: 'UPD-2' }],
      released: [
        { kind: 'sender', id: 'UPD-1B' },
        { kind: 'formSource', id: 'UPD-FORMS' },
      ],
    });
    expect(await owner('sender', 'UPD-1')).toBe('upd-lab'); // UPD-1 and upd-1 are one claim
    expect(await owner('sender', 'UPD-2')).toBe('upd-lab');
    expect(await owner('sender', 'UPD-1B')).toBeUndefined();
    expect((await admin.create(request('taker-forms', { formSourceIds: ['upd-forms'] }), now)).outcome).toBe('created');
    expect(await owner('formSource', 'UPD-FORMS')).toBe('taker-forms');
  });

  it("refuses another partner's sender id or form source: the partner and every claim stay as they were", async () => {
    const before = await store.getPartner('upd-lab');
    const before_claims = (await claimsOf('upd-lab')).sort();
    expect(await refusal(admin.update({ partnerId: 'upd-lab', senderIds: ['UPD-1', 'UPD-3', 'other-lis'] }, now))).toContain(
      'sender id OTHER-LIS is owned by partner other-lab',
    );
    expect(await refusal(admin.update({ partnerId: 'upd-lab', formSourceIds: ['upd-forms-2', 'OTHER-FORMS'] }, now))).toContain(
      'form source OTHER-FORMS is owned by partner other-lab',
    );
    expect(await store.getPartner('upd-lab')).toEqual(before);
    expect((await claimsOf('upd-lab')).sort()).toEqual(before_claims);
    expect(await owner('sender', 'UPD-3')).toBeUndefined();
    expect(await owner('sender', 'OTHER-LIS')).toBe('other-lab');
  });

  it('an update of another field never depends on the lists: it claims nothing', async () => {
    const result = await admin.update({ partnerId: 'upd-lab', rateLimit: 50 }, now);
    expect(result.claims).toEqual({ claimed: [], released: [] });
  });

  it('a partner write that fails releases the claims this call made, keeps the old ones', async () => {
    const faulty = faultyAdmin('UpdateItemCommand', 'PARTNER#upd-lab');
    await expect(faulty.update({ partnerId: 'upd-lab', senderIds: ['UPD-9'], assigningAuthorities: ['UPD-AA'] }, now)).rejects.toThrow('injected fault');
    expect(await owner('sender', 'UPD-9')).toBeUndefined();
    expect(await owner('authority', 'UPD-AA')).toBeUndefined();
    expect(await owner('sender', 'UPD-2')).toBe('upd-lab');
  });
});

describe('claimsReport and repairClaims (a deployment from before sender and form source claims)', () => {
  const legacy = (partnerId: string, senders: string[], sources: string[] = []): PartnerRecord => ({
    partnerId,
    name: partnerId,
    policy: 'active',
    rateLimit: 1000,
    rateWindowSeconds: 60,
    allowedSenderIds: senders,
    allowedFormSourceIds: sources,
  });
  const statuses = async () =>
    Object.fromEntries(
      (await admin.claimsReport())
        .filter((r) => r.listedBy.some((p) => p.startsWith('old-')) || r.owner?.startsWith('old-'))
        .map((r) => [`${r.kind} ${r.id}`, r.status]),
    );

  beforeAll(async () => {
    // written as before claims existed: no claim items
    await store.putPartner(legacy('old-a', ['OLD-A-LIS', 'SHARED-LIS'], ['old-a-forms']));
    await store.putPartner(legacy('old-b', ['shared-lis', 'MOVED-LIS']));
    await store.putPartner(legacy('old-wild', ['*']));
    // a claim whose holder no longer lists the id (an update that stopped before its release)
    await claims.claim('sender', 'MOVED-LIS', 'old-a', now);
    await claims.claim('sender', 'GONE-LIS', 'old-a', now);
  });

  it('lists each id with its owner, listers and status', async () => {
    expect(await statuses()).toEqual({
      'sender *': 'wildcard',
      'sender GONE-LIS': 'stale',
      'sender MOVED-LIS': 'stale',
      'sender OLD-A-LIS': 'unclaimed',
      'sender SHARED-LIS': 'shared',
      'formSource OLD-A-FORMS': 'unclaimed',
    });
    const shared = (await admin.claimsReport()).find((r) => r.id === 'SHARED-LIS');
    expect(shared).toMatchObject({ kind: 'sender', listedBy: ['old-a', 'old-b'] });
    expect(shared?.owner).toBeUndefined();
  });

  it('--repair claims ids for their only lister, moves stale claims, and leaves the conflicts to the operator; each write is audited', async () => {
    const audited: AdminAuditEvent[] = [];
    const repair = await new PartnerAdmin(store, async (event) => void audited.push(event)).repairClaims(now);
    expect(audited.filter((e) => e.action === AdminActions.claimRepair)).toHaveLength(repair.claimed.length + repair.released.length);
    expect(audited).toEqual(
      expect.arrayContaining([
        { action: AdminActions.claimRepair, partnerId: 'old-b', changes: [{ field: 'claim sender MOVED-LIS', before: '', after: 'old-b' }] },
        { action: AdminActions.claimRepair, partnerId: 'old-a', changes: [{ field: 'claim sender GONE-LIS', before: 'old-a', after: '' }] },
      ]),
    );
    expect(repair.claimed).toEqual(
      expect.arrayContaining([
        { kind: 'sender', id: 'MOVED-LIS', partnerId: 'old-b' },
        { kind: 'sender', id: 'OLD-A-LIS', partnerId: 'old-a' },
        { kind: 'formSource', id: 'OLD-A-FORMS', partnerId: 'old-a' },
      ]),
    );
    expect(repair.released).toEqual(
      expect.arrayContaining([
        { kind: 'sender', id: 'GONE-LIS', partnerId: 'old-a' },
        { kind: 'sender', id: 'MOVED-LIS', partnerId: 'old-a' },
      ]),
    );
    expect(await statuses()).toEqual({
      'sender *': 'wildcard',
      'sender MOVED-LIS': 'owned',
      'sender OLD-A-LIS': 'owned',
      'sender SHARED-LIS': 'shared',
      'formSource OLD-A-FORMS': 'owned',
    });
    expect(await owner('sender', 'SHARED-LIS')).toBeUndefined();

    // the operator resolves the rest with partners update; a second repair then has nothing left
    await admin.update({ partnerId: 'old-b', senderIds: ['MOVED-LIS'] }, now);
    await admin.update({ partnerId: 'old-wild', senderIds: [] }, now);
    const second = await admin.repairClaims(now);
    expect(second.claimed).toEqual([{ kind: 'sender', id: 'SHARED-LIS', partnerId: 'old-a' }]);
    expect(Object.values(await statuses()).every((s) => s === 'owned')).toBe(true);
  });
});
