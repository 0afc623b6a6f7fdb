/**
 * `npm run partners` and assigning authorities (docs/write-authority.md, "Identity namespaces"):
 * the CLI's code (partnersCli, as scripts/partners.ts calls it) against the local stack's real keys
 * table; the claim items it writes; the principal the authorizer hands to the handlers.
 */
import type { APIGatewayAuthorizerResult, APIGatewayProxyEvent } from 'aws-lambda';
import { AuthorizerFunction, HttpEndpoints, Scopes } from '../config/service';
import { dynamoDbClient } from '../aws/clients';
import { ApiKeyStore } from '../keys/api-key-store';
import { decodeDecision } from '../keys/authorizer-context';
import { chartAssigningAuthority } from '../keys/chart-authority';
import { IdentityClaimStore, type IdentityKind } from '../keys/identity-claims';
import { authorizerEventFor } from '../local/api-gateway';
import { DEMO_PARTNERS, loadDemoKeys } from '../local/demo-keys';
import { loadHandler } from '../local/function-registry';
import { lambdaContext } from '../local/lambda-context';
import type { LocalStack } from '../local/stack';
import { startTestStack } from '../../test/support/local-stack';
import { main as audit } from '../../scripts/audit';
import { AuditTrail } from '../audit/audit-trail';
import { AuditTrailReader } from '../audit/audit-trail-reader';
import { hl7ProfileOf } from '../exports/message-header';
import { keysCli } from './keys-cli';
import { partnersCli } from './partners-cli';
import { localTarget } from './target';

let stack: LocalStack;
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  await stack?.close();
});

interface Run {
  code: number;
  out: string;
  err: string;
}

async function run(tool: 'keys' | 'partners', argv: string[]): Promise<Run> {
  let out = '';
  let err = '';
  const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
  const cli = tool === 'keys' ? keysCli : partnersCli;
  const code = await cli(argv, io, { resolveTarget: () => localTarget() });
  return { code, out, err };
}

const store = () => new ApiKeyStore(dynamoDbClient(), stack.tables.keys);
const owners = async (...authorities: string[]) => Promise.all(authorities.map((a) => store().authorityOwner(a)));
const claims = () => new IdentityClaimStore(dynamoDbClient(), stack.tables.keys);
const claimOwner = (kind: IdentityKind, id: string) => claims().owner(kind, id);

/** The request as the local gateway hands it to the authorizer, and the principal the handler decodes. */
async function principalFor(secret: string) {
  const endpoint = HttpEndpoints.find((e) => e.scope === Scopes.ingestHl7)!;
  const event = {
    resource: endpoint.path,
    path: endpoint.path,
    httpMethod: endpoint.method,
    headers: { 'x-api-key': secret },
    multiValueHeaders: { 'x-api-key': [secret] },
    queryStringParameters: null,
    multiValueQueryStringParameters: null,
    pathParameters: null,
    stageVariables: null,
    body: null,
    isBase64Encoded: false,
    requestContext: { identity: { sourceIp: '127.0.0.1' } },
  } as unknown as APIGatewayProxyEvent;
  const authorizer = await loadHandler(AuthorizerFunction.name);
  const result = (await authorizer(authorizerEventFor(event), lambdaContext(AuthorizerFunction.name, 5), () => undefined)) as APIGatewayAuthorizerResult;
  // what lib/local/api-gateway.ts dispatch puts on the event, decoded as the handler's pipeline does
  const decision = decodeDecision({ ...(result.context ?? {}), principalId: result.principalId });
  expect(decision?.outcome).toBe('allow');
  return decision!.principal!;
}

describe('partners create --assigning-authority', () => {
  it('normalises the authorities, claims them, shows them, and compares them for idempotence', async () => {
    const created = await run('partners', [
      'create',
      'acme-lab',
      '--tier',
      'standard',
      '--assigning-authority',
      ' acme-lab ',
      '--assigning-authority',
      'ACME-2,Acme-Lab',
    ]);
    expect(created).toMatchObject({ code: 0, out: expect.stringContaining('assigning authority ACME-LAB, ACME-2') });
    expect((await store().getPartner('acme-lab'))?.assigningAuthorities).toEqual(['ACME-LAB', 'ACME-2']);
    expect(await owners('ACME-LAB', ' acme-2 ', 'ACME-3')).toEqual(['acme-lab', 'acme-lab', undefined]);
    const authorityClaims = (await claims().list()).filter((c) => c.kind === 'authority').map((c) => ({ authority: c.id, partnerId: c.partnerId }));
    expect(authorityClaims.filter((c) => c.partnerId === 'acme-lab')).toEqual([
      { authority: 'ACME-2', partnerId: 'acme-lab' },
      { authority: 'ACME-LAB', partnerId: 'acme-lab' },
    ]);

    const shown = await run('partners', ['show', 'acme-lab']);
    expect(shown.out.split('\n')[0]).toMatch(/FORM SOURCES\s+AUTHORITIES\s+RECEIVING/);
    expect(shown.out).toContain('ACME-LAB,ACME-2');
    const listed = JSON.parse((await run('partners', ['list', '--json'])).out) as Array<{ partnerId: string; assigningAuthorities?: string[] }>;
    expect(listed.find((p) => p.partnerId === 'acme-lab')?.assigningAuthorities).toEqual(['ACME-LAB', 'ACME-2']);

    // the same set again (any order, any case) is idempotent; another set is refused
    expect((await run('partners', ['create', '--partner-id', 'acme-lab', '--tier', 'standard', '--assigning-authority', 'acme-2,ACME-LAB'])).out).toContain(
      'exists',
    );
    const other = await run('partners', ['create', 'acme-lab', '--tier', 'standard', '--assigning-authority', 'ACME-LAB']);
    expect(other.code).toBe(1);
    expect(other.err).toContain('assigning-authority is "ACME-2,ACME-LAB", not "ACME-LAB"');
    expect(await owners('ACME-2')).toEqual(['acme-lab']);
  });

  it('an authority another partner owns is refused and nothing is written (no partner, no claim)', async () => {
    await run('partners', ['create', 'owner-lab', '--tier', 'standard', '--assigning-authority', 'OWNED-1']);
    const refused = await run('partners', ['create', 'rival-lab', '--tier', 'standard', '--assigning-authority', 'FREE-1,owned-1']);
    expect(refused).toMatchObject({ code: 1, err: 'assigning authority OWNED-1 is owned by partner owner-lab; an authority has one owner; nothing changed\n' });
    expect(await store().getPartner('rival-lab')).toBeUndefined();
    expect(await owners('FREE-1', 'OWNED-1')).toEqual([undefined, 'owner-lab']);
  });

  it("the chart's own authority (CHART_ASSIGNING_AUTHORITY, default DEMO-HOSP) is never a partner's", async () => {
    expect(chartAssigningAuthority({})).toBe('DEMO-HOSP');
    expect(chartAssigningAuthority({ CHART_ASSIGNING_AUTHORITY: ' my-chart ' })).toBe('MY-CHART');
    const refused = await run('partners', ['create', 'chart-thief', '--tier', 'standard', '--assigning-authority', 'demo-hosp']);
    expect(refused.code).toBe(1);
    expect(refused.err).toContain("DEMO-HOSP is the chart's own (CHART_ASSIGNING_AUTHORITY)");
    expect(await store().getPartner('chart-thief')).toBeUndefined();
    expect(await owners('DEMO-HOSP')).toEqual([undefined]);

    const previous = process.env.CHART_ASSIGNING_AUTHORITY;
    process.env.CHART_ASSIGNING_AUTHORITY = 'Other-Chart';
    try {
      expect((await run('partners', ['create', 'chart-thief', '--tier', 'standard', '--assigning-authority', 'OTHER-CHART'])).code).toBe(1);
    } finally {
      if (previous === undefined) delete process.env.CHART_ASSIGNING_AUTHORITY;
      else process.env.CHART_ASSIGNING_AUTHORITY = previous;
    }
    expect(await store().getPartner('chart-thief')).toBeUndefined();
  });

  it('malformed authorities are refused', async () => {
    for (const bad of ['*', 'A^B', 'A|B', 'X'.repeat(65)]) {
      const r = await run('partners', ['create', 'bad-auth', '--tier', 'standard', '--assigning-authority', bad]);
      expect(r.code).toBe(1);
      expect(r.err.trim().split('\n')).toHaveLength(1);
    }
    expect(await store().getPartner('bad-auth')).toBeUndefined();
  });
});

describe('partners update', () => {
  it('adds and removes authorities (claims follow), keeps every field not given, and never touches the policy', async () => {
    await run('partners', [
      'create',
      'upd-lab',
      '--tier',
      'standard',
      '--sender-id',
      'UPD',
      '--assigning-authority',
      'UPD-1',
      '--receiving-facility',
      'UPD-FAC',
    ]);
    await run('partners', ['block', 'upd-lab']);
    const updated = await run('partners', ['update', '--partner-id', 'upd-lab', '--assigning-authority', 'upd-2', '--assigning-authority', 'UPD-3']);
    expect(updated.code).toBe(0);
    expect(updated.out).toBe(
      'updated partner upd-lab on local stack: assigning-authority is "UPD-1", now "UPD-2,UPD-3"\nclaimed assigning authority UPD-2, UPD-3\nreleased assigning authority UPD-1\n',
    );
    expect(await owners('UPD-1', 'UPD-2', 'UPD-3')).toEqual([undefined, 'upd-lab', 'upd-lab']);
    expect(await store().getPartner('upd-lab')).toMatchObject({
      policy: 'blocked',
      tier: 'standard',
      allowedSenderIds: ['UPD'],
      receivingFacility: 'UPD-FAC',
      assigningAuthorities: ['UPD-2', 'UPD-3'],
    });

    const more = await run('partners', [
      'update',
      'upd-lab',
      '--tier',
      'high',
      '--rate-limit',
      '10/30s',
      '--receiving-facility',
      '',
      '--sender-id',
      '',
      '--json',
    ]);
    expect(more.code).toBe(0);
    expect(JSON.parse(more.out)).toMatchObject({ outcome: 'updated', claimed: [], released: [] });
    const after = await store().getPartner('upd-lab');
    expect(after).toMatchObject({
      policy: 'blocked',
      tier: 'high',
      rateLimit: 10,
      rateWindowSeconds: 30,
      allowedSenderIds: [],
      assigningAuthorities: ['UPD-2', 'UPD-3'],
    });
    expect(after?.receivingFacility).toBeUndefined();

    expect((await run('partners', ['update', 'upd-lab', '--tier', 'high'])).out).toBe('partner upd-lab on local stack: same settings, nothing changed\n');
    // an empty list releases every authority
    expect((await run('partners', ['update', 'upd-lab', '--assigning-authority', ''])).out).toContain('released assigning authority UPD-2, UPD-3');
    expect(await owners('UPD-2', 'UPD-3')).toEqual([undefined, undefined]);
  });

  it("refuses, with nothing changed, an authority another partner owns or the chart's own", async () => {
    await run('partners', ['create', 'keep-lab', '--tier', 'standard', '--assigning-authority', 'KEEP-1']);
    await run('partners', ['create', 'taken-lab', '--tier', 'standard', '--assigning-authority', 'TAKEN-1']);
    const before = await store().getPartner('keep-lab');
    const taken = await run('partners', ['update', 'keep-lab', '--name', 'Renamed', '--assigning-authority', 'KEEP-1,KEEP-NEW,TAKEN-1']);
    expect(taken).toMatchObject({ code: 1, err: 'assigning authority TAKEN-1 is owned by partner taken-lab; an authority has one owner; nothing changed\n' });
    const chart = await run('partners', ['update', 'keep-lab', '--assigning-authority', 'DEMO-HOSP']);
    expect(chart.code).toBe(1);
    expect(chart.err).toContain("the chart's own");
    expect(await store().getPartner('keep-lab')).toEqual(before);
    expect(await owners('KEEP-1', 'KEEP-NEW', 'TAKEN-1', 'DEMO-HOSP')).toEqual(['keep-lab', undefined, 'taken-lab', undefined]);
  });

  it('usage: an unknown partner is exit 1; no field, or two different partner ids, is exit 2 with one line', async () => {
    expect(await run('partners', ['update', 'nobody', '--tier', 'high'])).toMatchObject({ code: 1, err: 'unknown partner nobody\n' });
    const none = await run('partners', ['update', 'acme-lab']);
    expect(none.code).toBe(2);
    expect(none.err).toMatch(/^update needs at least one of --name, --tier/);
    const two = await run('partners', ['update', 'acme-lab', '--partner-id', 'other', '--tier', 'high']);
    expect(two.code).toBe(2);
    expect(two.err.trim().split('\n')).toHaveLength(1);
    // a malformed partner id is wrong usage too: exit 2, one line with where help is, nothing written
    for (const argv of [
      ['create', 'p', '--tier', 'standard'],
      ['create', 'Bad_Id', '--tier', 'standard'],
      ['create', '--partner-id', 'p', '--assigning-authority', 'P-LAB'],
    ]) {
      const bad = await run('partners', argv);
      expect(bad.code).toBe(2);
      expect(bad.err).toMatch(/^partner id must be lower-case letters, digits and '-', 2-63 characters, got "[^"]+" \(see `npm run partners -- --help`\)\n$/);
      expect(await store().getPartner(argv[1] === '--partner-id' ? argv[2]! : argv[1]!)).toBeUndefined();
    }
    const help = await run('partners', ['update', '--help']);
    expect(help.code).toBe(0);
    expect(help.out).toContain('--assigning-authority NAME');
    expect(help.out).toContain('--partner-id ID');
  });
});

describe('demo partners and the principal', () => {
  it('demo-lab owns DEMO-LAB and demo-ehr DEMO-EHR; the chart authority has no owner', async () => {
    expect(await owners('DEMO-LAB', 'demo-ehr', 'DEMO-HOSP')).toEqual(['demo-lab', 'demo-ehr', undefined]);
  });

  it('loading the demo keys again gives a demo partner stored without authorities its claims, and leaves an updated one as it is', async () => {
    const demoEhr = DEMO_PARTNERS.find((p) => p.partnerId === 'demo-ehr')!;
    const { assigningAuthorities: _a, ...older } = demoEhr;
    await store().putPartner(older);
    await claims().release('authority', 'DEMO-EHR', 'demo-ehr');
    await loadDemoKeys(store(), new Date());
    expect((await store().getPartner('demo-ehr'))?.assigningAuthorities).toEqual(['DEMO-EHR']);
    expect(await owners('DEMO-EHR')).toEqual(['demo-ehr']);

    expect((await run('partners', ['update', 'demo-ehr', '--assigning-authority', 'DEMO-EHR-2'])).code).toBe(0);
    await loadDemoKeys(store(), new Date());
    expect((await store().getPartner('demo-ehr'))?.assigningAuthorities).toEqual(['DEMO-EHR-2']);
    expect(await owners('DEMO-EHR', 'DEMO-EHR-2')).toEqual([undefined, 'demo-ehr']);
    expect((await run('partners', ['update', 'demo-ehr', '--assigning-authority', 'DEMO-EHR'])).code).toBe(0);
  });

  it('loading the demo keys again (npm start on an existing .local/) claims sender ids and form sources seeded before claims, drops the old wildcard, and is idempotent', async () => {
    // as a .local/ seeded before sender id and form source claims: no claim items, demo-blocked with '*'
    await claims().release('sender', 'DEMO-LAB-LIS', 'demo-lab');
    await claims().release('sender', 'demo-lab', 'demo-lab');
    await claims().release('formSource', 'demo-forms', 'demo-forms');
    const blocked = DEMO_PARTNERS.find((p) => p.partnerId === 'demo-blocked')!;
    await store().putPartner({ ...blocked, allowedSenderIds: ['*'] });
    expect(await claimOwner('sender', 'DEMO-LAB-LIS')).toBeUndefined();
    for (let run = 0; run < 2; run++) {
      await loadDemoKeys(store(), new Date());
      expect(await Promise.all([claimOwner('sender', 'DEMO-LAB-LIS'), claimOwner('sender', 'DEMO-LAB'), claimOwner('formSource', 'DEMO-FORMS')])).toEqual([
        'demo-lab',
        'demo-lab',
        'demo-forms',
      ]);
      expect((await store().getPartner('demo-blocked'))?.allowedSenderIds).toEqual([]);
    }
  });

  it('the principal carries the partner assigning authorities from the authorizer to the handler, and follows an update', async () => {
    expect((await principalFor('demo-hl7-key')).assigningAuthorities).toEqual(['DEMO-LAB']);

    await run('partners', ['create', 'hl7-lab', '--tier', 'standard', '--assigning-authority', 'HL7-LAB']);
    const created = await run('keys', ['create', '--partner', 'hl7-lab', '--scopes', Scopes.ingestHl7]);
    const secret = /secret \(shown once\): (\S+)/.exec(created.out)?.[1] ?? '';
    expect((await principalFor(secret)).assigningAuthorities).toEqual(['HL7-LAB']);
    await run('partners', ['update', 'hl7-lab', '--assigning-authority', 'HL7-LAB,HL7-LAB-2']);
    expect((await principalFor(secret)).assigningAuthorities).toEqual(['HL7-LAB', 'HL7-LAB-2']);
    // a partner without authorities: an empty list
    await run('partners', ['create', 'noauth-lab', '--tier', 'standard']);
    const bare = /secret \(shown once\): (\S+)/.exec((await run('keys', ['create', '--partner', 'noauth-lab', '--scopes', Scopes.ingestHl7])).out)?.[1] ?? '';
    expect((await principalFor(bare)).assigningAuthorities).toEqual([]);
  });

  it('partners create/update --time-zone: an IANA name is stored, carried in the principal, removed with ""; another name is refused', async () => {
    const created = await run('partners', ['create', 'tz-lab', '--tier', 'standard', '--time-zone', 'America/Chicago']);
    expect(created.code).toBe(0);
    expect((await store().getPartner('tz-lab'))?.timeZone).toBe('America/Chicago');
    const again = await run('partners', ['create', 'tz-lab', '--tier', 'standard', '--time-zone', 'America/Denver']);
    expect(again.code).toBe(1);
    expect(again.err).toContain('time-zone is "America/Chicago", not "America/Denver"');
    const key = /secret \(shown once\): (\S+)/.exec((await run('keys', ['create', '--partner', 'tz-lab', '--scopes', Scopes.ingestHl7])).out)?.[1] ?? '';
    expect((await principalFor(key)).timeZone).toBe('America/Chicago');
    const bad = await run('partners', ['update', 'tz-lab', '--time-zone', 'Mars/Olympus']);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain('not an IANA time zone name');
    expect((await store().getPartner('tz-lab'))?.timeZone).toBe('America/Chicago');
    const updated = await run('partners', ['update', 'tz-lab', '--time-zone', 'Europe/Berlin']);
    expect(updated.out).toContain('time-zone is "America/Chicago", now "Europe/Berlin"');
    expect((await principalFor(key)).timeZone).toBe('Europe/Berlin');
    await run('partners', ['update', 'tz-lab', '--time-zone', '']);
    expect((await store().getPartner('tz-lab'))?.timeZone).toBeUndefined();
    expect((await principalFor(key)).timeZone).toBeUndefined();
  });
});

describe('partners update --hl7-profile, and every partner change audited', () => {
  const trail = () => new AuditTrailReader(dynamoDbClient(), stack.tables.audit);

  it('sets the HL7 export profile (the principal carries it, hl7ProfileOf applies every value), replaces it, removes it with ""', async () => {
    expect(await run('partners', ['create', 'prof-ehr', '--tier', 'standard', '--hl7-profile', 'encounterStyle=oru'])).toMatchObject({ code: 0 });
    expect((await store().getPartner('prof-ehr'))?.hl7Profile).toEqual({ encounterStyle: 'oru' });
    const key = /secret \(shown once\): (\S+)/.exec((await run('keys', ['create', '--partner', 'prof-ehr', '--scopes', Scopes.ingestHl7])).out)?.[1] ?? '';

    const profile = 'encounterStyle=adt,summaryStyle=oru,noteDocumentType=PR,sendingApplication=EHR-APP,sendingFacility=EHR FAC';
    const updated = await run('partners', ['update', 'prof-ehr', '--hl7-profile', profile]);
    expect(updated.out).toBe(`updated partner prof-ehr on local stack: hl7-profile is "encounterStyle=oru", now "${profile}"\n`);
    const principal = await principalFor(key);
    expect(principal.hl7Profile).toEqual({
      encounterStyle: 'adt',
      summaryStyle: 'oru',
      noteDocumentType: 'PR',
      sendingApplication: 'EHR-APP',
      sendingFacility: 'EHR FAC',
    });
    // what the CLI accepts, the exports apply (nothing falls back to a default)
    expect(hl7ProfileOf(principal)).toEqual(principal.hl7Profile);
    expect((await run('partners', ['show', 'prof-ehr'])).out).toContain(profile);

    await run('partners', ['update', 'prof-ehr', '--hl7-profile', '']);
    expect((await store().getPartner('prof-ehr'))?.hl7Profile).toBeUndefined();
    expect((await principalFor(key)).hl7Profile).toBeUndefined();
  });

  it.each([
    ['encounterStyle=hl7', /--hl7-profile: HL7 profile encounterStyle must be adt or oru, got "hl7"/],
    ['colour=blue', /--hl7-profile: unknown HL7 profile field "colour"/],
    ['noteDocumentType=pr', /noteDocumentType must be a table 0270 code/],
    ['sendingApplication=A|B', /sendingApplication must be an HD namespace id/],
    ['summaryStyle=oru,summaryStyle=batch', /summaryStyle is given twice/],
  ])('--hl7-profile %s: exit 2, one line, nothing changed', async (value, message) => {
    await run('partners', ['create', 'prof-bad', '--tier', 'standard']);
    const r = await run('partners', ['update', 'prof-bad', '--hl7-profile', value]);
    expect(r.code).toBe(2);
    expect(r.err.trim().split('\n')).toHaveLength(1);
    expect(r.err).toMatch(message);
    expect((await store().getPartner('prof-bad'))?.hl7Profile).toBeUndefined();
  });

  it("create, update (tier, sender ids, form sources, authorities, HL7 profile, time zone), block and unblock: one record each, who, when, before and after; listed by npm run audit -- --partner with its keys' changes", async () => {
    process.env.INTEROP_OPERATOR = 'ops-alice';
    let keyId: string;
    try {
      await run('partners', ['create', 'aud-forms', '--tier', 'standard']);
      const updated = await run('partners', [
        'update',
        'aud-forms',
        '--tier',
        'high',
        '--sender-id',
        'AUD',
        '--form-source',
        'aud-intake',
        '--assigning-authority',
        'AUD-MRN',
        '--hl7-profile',
        'summaryStyle=oru',
        '--time-zone',
        'America/Chicago',
      ]);
      expect(updated.code).toBe(0);
      await run('partners', ['update', 'aud-forms', '--tier', 'high']); // nothing changed: no record
      await run('partners', ['block', 'aud-forms']);
      await run('partners', ['unblock', 'aud-forms']);
      // key changes are recorded under the key; npm run audit -- --partner lists them too
      const created = await run('keys', ['create', '--partner', 'aud-forms', '--scopes', Scopes.ingestForms]);
      keyId = /created (key_[0-9a-f]{12})/.exec(created.out)?.[1] ?? '';
      expect(keyId).not.toBe('');
      expect((await run('keys', ['revoke', keyId])).code).toBe(0);
    } finally {
      delete process.env.INTEROP_OPERATOR;
    }
    const records = await trail().forResource('partner', 'aud-forms');
    expect(records.map((r) => r.action)).toEqual(['admin.partner.create', 'admin.partner.update', 'admin.partner.block', 'admin.partner.unblock']);
    expect(records.every((r) => r.operator === 'ops-alice' && r.partnerId === 'aud-forms' && !Number.isNaN(Date.parse(r.at)))).toBe(true);
    expect(records[1]!.changes).toEqual([
      { field: 'tier', before: 'standard', after: 'high' },
      { field: 'sender-id', before: '', after: 'AUD' },
      { field: 'form-source', before: '', after: 'aud-intake' },
      { field: 'assigning-authority', before: '', after: 'AUD-MRN' },
      { field: 'time-zone', before: '', after: 'America/Chicago' },
      { field: 'hl7-profile', before: '', after: 'summaryStyle=oru' },
    ]);
    expect(records[2]!.changes).toEqual([{ field: 'policy', before: 'active', after: 'blocked' }]);

    let out = '';
    let err = '';
    const code = await audit(['--partner', 'aud-forms'], { out: (t) => (out += t), err: (t) => (err += t) });
    expect(code).toBe(0);
    expect(err).toBe('6 audit records for partner aud-forms\n');
    const lines = out.trimEnd().split('\n');
    expect(lines[1]).toMatch(/admin\.partner\.update .* operator=ops-alice .*tier: "standard" -> "high"; sender-id: "" -> "AUD";/);
    expect(lines.map((l) => /admin\.\S+/.exec(l)?.[0])).toEqual([
      'admin.partner.create',
      'admin.partner.update',
      'admin.partner.block',
      'admin.partner.unblock',
      'admin.key.create',
      'admin.key.revoke',
    ]);
    expect(lines[4]).toContain(`key=${keyId}`);
    expect(lines[5]).toContain(`key=${keyId}`);
    // --key still lists the key's records alone
    let keyOut = '';
    expect(await audit(['--key', keyId], { out: (t) => (keyOut += t), err: () => undefined })).toBe(0);
    expect(
      keyOut
        .trimEnd()
        .split('\n')
        .map((l) => /admin\.\S+/.exec(l)?.[0]),
    ).toEqual(['admin.key.create', 'admin.key.revoke']);
    const usage = await audit(['--partner', 'aud-forms', '--patient', 'p1'], { out: () => undefined, err: () => undefined });
    expect(usage).toBe(2);
  });

  it('a change whose audit record cannot be written: exit 1, one line that says the change was made and is not audited', async () => {
    await run('partners', ['create', 'aud-fail', '--tier', 'standard']);
    const append = jest
      .spyOn(AuditTrail.prototype, 'append')
      .mockRejectedValueOnce(Object.assign(new Error('Throughput exceeds the current capacity'), { name: 'ProvisionedThroughputExceededException' }));
    try {
      const r = await run('partners', ['update', 'aud-fail', '--tier', 'high']);
      expect(r.code).toBe(1);
      expect(r.err).toBe(
        'partners failed: UnauditedChangeError: admin.partner.update of aud-fail was made, but its audit record could not be written (ProvisionedThroughputExceededException): the change stays; record it in the audit table by hand\n',
      );
    } finally {
      append.mockRestore();
    }
    expect((await store().getPartner('aud-fail'))?.tier).toBe('high');
  });

  it('key changes are listed by npm run audit -- --key: create, rotate (both keys), revoke', async () => {
    await run('partners', ['create', 'aud-lab', '--tier', 'standard']);
    const oldId = /created (key_[0-9a-f]{12})/.exec((await run('keys', ['create', '--partner', 'aud-lab', '--scopes', Scopes.ingestResults])).out)![1]!;
    const newId = /created (key_[0-9a-f]{12})/.exec((await run('keys', ['rotate', oldId])).out)![1]!;
    await run('keys', ['revoke', newId]);
    expect((await trail().forResource('key', oldId)).map((r) => r.action)).toEqual(['admin.key.create', 'admin.key.rotate']);
    expect((await trail().forResource('key', newId)).map((r) => [r.action, r.changes?.find((c) => c.field === 'status')?.after])).toEqual([
      ['admin.key.rotate', 'active'],
      ['admin.key.revoke', 'revoked'],
    ]);
  });
});

describe('partners claims', () => {
  const legacy = (partnerId: string, senders: string[], sources: string[] = []) => ({
    partnerId,
    name: partnerId,
    policy: 'active' as const,
    rateLimit: 1000,
    rateWindowSeconds: 60,
    allowedSenderIds: senders,
    allowedFormSourceIds: sources,
  });

  it('lists every id with its owner and listers (exit 1 while one is not owned by its only lister); --repair claims the unclaimed and names the conflicts; partners update resolves them', async () => {
    // two partners as a deployment from before sender id claims holds them: no claim items, one sender id listed by both
    await store().putPartner(legacy('legacy-lab', ['LEGACY-LIS', 'TWICE-LIS'], ['legacy-forms']));
    await store().putPartner(legacy('legacy-copy', ['twice-lis']));
    const conflict =
      'conflict: sender id TWICE-LIS is listed by legacy-copy, legacy-lab (claimed by none): remove it from all but its owner with npm run partners -- update <partnerId> --sender-id ...\n';

    const report = await run('partners', ['claims']);
    expect(report.code).toBe(1);
    expect(report.out.split('\n')[0]).toMatch(/^KIND\s+ID\s+OWNER\s+LISTED BY\s+STATUS$/);
    expect(report.out).toMatch(/\nsender id\s+DEMO-LAB-LIS\s+demo-lab\s+demo-lab\s+owned\n/);
    expect(report.out).toMatch(/\nsender id\s+LEGACY-LIS\s+-\s+legacy-lab\s+unclaimed\n/);
    expect(report.out).toMatch(/\nsender id\s+TWICE-LIS\s+-\s+legacy-copy,legacy-lab\s+shared\n/);
    expect(report.out).toMatch(/\nform source\s+LEGACY-FORMS\s+-\s+legacy-lab\s+unclaimed\n/);
    expect(report.err).toContain(conflict);
    expect(report.err).toContain('2 id(s) unclaimed or with a stale claim: run npm run partners -- claims --repair\n');
    expect(await claimOwner('sender', 'LEGACY-LIS')).toBeUndefined(); // the report writes nothing

    const repaired = await run('partners', ['claims', '--repair']);
    expect(repaired.code).toBe(1);
    expect(repaired.out).toContain('claimed sender id LEGACY-LIS for legacy-lab\n');
    expect(repaired.out).toContain('claimed form source LEGACY-FORMS for legacy-lab\n');
    expect(repaired.err).toBe(conflict);
    expect(await Promise.all([claimOwner('sender', 'LEGACY-LIS'), claimOwner('formSource', 'legacy-forms'), claimOwner('sender', 'TWICE-LIS')])).toEqual([
      'legacy-lab',
      'legacy-lab',
      undefined,
    ]);

    // the operator removes the id from the partner that should not have it
    const update = await run('partners', ['update', 'legacy-copy', '--sender-id', 'COPY-LIS']);
    expect(update).toMatchObject({
      code: 0,
      out: 'updated partner legacy-copy on local stack: sender-id is "twice-lis", now "COPY-LIS"\nclaimed sender id COPY-LIS\n',
    });
    const done = await run('partners', ['claims', '--repair', '--json']);
    expect(done).toMatchObject({ code: 0, err: '' });
    expect(JSON.parse(done.out)).toMatchObject({ conflicts: [], claimed: [{ kind: 'sender', id: 'TWICE-LIS', partnerId: 'legacy-lab' }], released: [] });
    expect(await run('partners', ['claims'])).toMatchObject({
      code: 0,
      err: '',
      out: expect.stringContaining('every id on local stack is owned by its only lister\n'),
    });
  });

  it('update output names each claim it made and released, by kind', async () => {
    await run('partners', ['create', 'out-lab', '--tier', 'standard', '--sender-id', 'OUT-1', '--form-source', 'out-forms']);
    const r = await run('partners', ['update', 'out-lab', '--sender-id', 'OUT-2', '--form-source', '']);
    expect(r.out).toBe(
      'updated partner out-lab on local stack: sender-id is "OUT-1", now "OUT-2"; form-source is "out-forms", now ""\nclaimed sender id OUT-2\nreleased sender id OUT-1\nreleased form source OUT-FORMS\n',
    );
    expect(await Promise.all([claimOwner('sender', 'OUT-1'), claimOwner('sender', 'OUT-2'), claimOwner('formSource', 'OUT-FORMS')])).toEqual([
      undefined,
      'out-lab',
      undefined,
    ]);
  });
});
