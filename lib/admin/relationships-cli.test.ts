/**
 * `npm run partners` and patients (docs/write-authority.md, "Relationships"): patient access on
 * create / update / show / list and the upgrade list (`partners patient-access`), and the
 * relationship commands (`relate`, `unrelate`, `relations`). The CLI's code (partnersCli, as
 * scripts/partners.ts calls it) against the in-process local stack's real tables (dynalite): the
 * keys table's partners, the chart table's relationship items, the audit table.
 */
import { dynamoDbClient } from '../aws/clients';
import { AuditTrailReader } from '../audit/audit-trail-reader';
import { ApiKeyStore } from '../keys/api-key-store';
import type { LocalStack } from '../local/stack';
import { readRelationship, relationshipHolds } from '../relationships/relationships';
import { startTestStack } from '../../test/support/local-stack';
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

async function run(argv: string[], now?: () => Date): Promise<Run> {
  let out = '';
  let err = '';
  const io = { out: (t: string) => void (out += t), err: (t: string) => void (err += t) };
  const code = await partnersCli(argv, io, { resolveTarget: () => localTarget(), now });
  return { code, out, err };
}

const store = () => new ApiKeyStore(dynamoDbClient(), stack.tables.keys);
const trail = () => new AuditTrailReader(dynamoDbClient(), stack.tables.audit);
const relationship = (partnerId: string, patientId: string) => readRelationship({ db: dynamoDbClient(), table: stack.tables.chart }, partnerId, patientId);

/** Runs with INTEROP_OPERATOR set (the identity the CLI records). */
async function asOperator<T>(name: string, body: () => Promise<T>): Promise<T> {
  const previous = process.env.INTEROP_OPERATOR;
  process.env.INTEROP_OPERATOR = name;
  try {
    return await body();
  } finally {
    if (previous === undefined) delete process.env.INTEROP_OPERATOR;
    else process.env.INTEROP_OPERATOR = previous;
  }
}

describe('partners --patient-access', () => {
  it('a new external partner is related, an internal one all; either can be given; show, list and the audit record name it', async () => {
    const external = await run(['create', 'pa-lab', '--tier', 'standard']);
    expect(external).toMatchObject({ code: 0, out: expect.stringContaining('patient access related') });
    expect((await store().getPartner('pa-lab'))?.patientAccess).toBe('related');
    expect((await run(['create', 'pa-staff', '--tier', 'standard', '--kind', 'internal'])).code).toBe(0);
    expect((await store().getPartner('pa-staff'))?.patientAccess).toBe('all');
    expect((await run(['create', 'pa-feed', '--tier', 'standard', '--patient-access', 'all'])).code).toBe(0);
    expect((await store().getPartner('pa-feed'))?.patientAccess).toBe('all');

    const shown = await run(['show', 'pa-lab']);
    expect(shown.out.split('\n')[0]).toMatch(/HL7 PROFILE\s+PATIENT ACCESS\s+NAME/);
    expect(shown.out.split('\n')[1]).toMatch(/\srelated\s+pa-lab$/);
    const listed = JSON.parse((await run(['list', '--json'])).out) as Array<{ partnerId: string; patientAccess: string; patientAccessSet: boolean }>;
    expect(listed.find((p) => p.partnerId === 'pa-feed')).toMatchObject({ patientAccess: 'all', patientAccessSet: true });
    const onlyRelated = JSON.parse((await run(['list', '--patient-access', 'related', '--json'])).out) as Array<{ partnerId: string }>;
    expect(onlyRelated.map((p) => p.partnerId)).toEqual(expect.arrayContaining(['pa-lab', 'demo-lab']));
    expect(onlyRelated.map((p) => p.partnerId)).not.toContain('pa-feed');

    const created = (await trail().forResource('partner', 'pa-lab')).find((r) => r.action === 'admin.partner.create');
    expect(created?.changes).toEqual(expect.arrayContaining([{ field: 'patient-access', before: '', after: 'related' }]));

    // the same create again is idempotent; another patient access is refused, naming it
    expect((await run(['create', 'pa-lab', '--tier', 'standard'])).out).toContain('exists');
    const other = await run(['create', 'pa-lab', '--tier', 'standard', '--patient-access', 'all']);
    expect(other).toMatchObject({ code: 1, err: expect.stringContaining('patient-access is "related", not "all"') });
  });

  it('a value other than related or all is wrong usage (exit 2), nothing read or written', async () => {
    for (const argv of [
      ['create', 'pa-bad', '--tier', 'standard', '--patient-access', 'some'],
      ['update', 'pa-lab', '--patient-access', 'ALL'],
      ['list', '--patient-access', ''],
    ]) {
      const r = await run(argv);
      expect(r).toMatchObject({
        code: 2,
        err: expect.stringMatching(/^--patient-access must be related or all, got ".*" \(see `npm run partners -- --help`\)\n$/),
      });
    }
    expect(await store().getPartner('pa-bad')).toBeUndefined();
  });

  it('the upgrade step: a partner stored before relationships reads as all (unset), is listed by partners patient-access until update sets it', async () => {
    // as a stage deployed before relationships stored it: no patientAccess
    await store().putPartner({
      partnerId: 'pa-old-lab',
      name: 'pa-old-lab',
      policy: 'active',
      rateLimit: 1000,
      rateWindowSeconds: 60,
      allowedSenderIds: [],
      kind: 'external',
      tier: 'standard',
    });
    const before = await run(['patient-access']);
    expect(before.code).toBe(0);
    const row = (id: string, out: string) => out.split('\n').find((l) => l.startsWith(`${id} `));
    expect(row('pa-old-lab', before.out)).toMatch(/^pa-old-lab\s+external\s+all \(unset\)\s+active\s+pa-old-lab$/);
    expect(row('demo-ehr', before.out)).toMatch(/\sall\s/);
    expect(row('pa-feed', before.out)).toMatch(/\sall\s/);
    expect(row('pa-lab', before.out)).toBeUndefined();
    expect(row('demo-lab', before.out)).toBeUndefined();
    expect(before.out).toMatch(
      /may read every chart patient; \d+ of them unset \(stored before relationships\): set each with npm run partners -- update <partnerId> --patient-access related\|all\n$/,
    );
    // re-running the onboarding create finds it as it is (patient access is compared only when given)
    expect((await run(['create', 'pa-old-lab', '--tier', 'standard'])).out).toContain('patient access all (unset)');

    const updated = await asOperator('ops-bea', () => run(['update', 'pa-old-lab', '--patient-access', 'related']));
    expect(updated).toMatchObject({ code: 0, out: expect.stringContaining('patient-access is "all (unset)", now "related"') });
    expect((await store().getPartner('pa-old-lab'))?.patientAccess).toBe('related');
    expect(row('pa-old-lab', (await run(['patient-access'])).out)).toBeUndefined();
    const record = (await trail().forResource('partner', 'pa-old-lab')).find((r) => r.action === 'admin.partner.update');
    expect(record).toMatchObject({ operator: 'ops-bea', changes: [{ field: 'patient-access', before: 'all (unset)', after: 'related' }] });

    // setting `all` explicitly on an unset partner is a change too (it then shows as set)
    await store().putPartner({ ...(await store().getPartner('pa-old-lab'))!, patientAccess: undefined });
    expect((await run(['update', 'pa-old-lab', '--patient-access', 'all'])).out).toContain('patient-access is "all (unset)", now "all"');
    expect(row('pa-old-lab', (await run(['patient-access'])).out)).toMatch(/\sall\s+active/);
  });
});

describe('partners relate | unrelate | relations', () => {
  beforeAll(async () => {
    await run(['create', 'rel-lab', '--tier', 'standard']);
  });

  it('relate makes a relationship (source operator, createdBy the operator, purpose TREAT), audited under the partner and the patient with ids only', async () => {
    const at = new Date();
    const related = await asOperator('ops-carl', () => run(['relate', 'rel-lab', 'demo-patient-3']));
    expect(related).toMatchObject({ code: 0, err: '' });
    expect(related.out).toBe('related: partner rel-lab with patient demo-patient-3 on local stack (purpose TREAT, until ended, source operator)\n');
    const stored = await relationship('rel-lab', 'demo-patient-3');
    expect(stored).toMatchObject({ partnerId: 'rel-lab', patientId: 'demo-patient-3', purpose: 'TREAT', source: 'operator', createdBy: 'ops-carl' });
    expect(Date.parse(stored!.since)).toBeGreaterThanOrEqual(at.getTime() - 1000);
    expect(relationshipHolds(stored, new Date())).toBe(true);

    const underPartner = (await trail().forResource('partner', 'rel-lab')).filter((r) => r.action === 'admin.relationship.relate');
    const underPatient = (await trail().forPatient('demo-patient-3')).filter((r) => r.action === 'admin.relationship.relate');
    for (const records of [underPartner, underPatient]) {
      expect(records).toHaveLength(1);
      expect(records[0]).toMatchObject({ operator: 'ops-carl', partnerId: 'rel-lab', resourceIds: { partner: 'rel-lab', patient: 'demo-patient-3' } });
      // ids, codes and dates only: nothing of the chart (no name, MRN or birth date)
      expect(JSON.stringify(records[0])).not.toMatch(/DEMO-0000|Sample|Example|19\d\d-\d\d-\d\d/);
    }
    expect(underPatient[0]!.patientId).toBe('demo-patient-3');
    expect(underPartner[0]!.changes).toEqual(
      expect.arrayContaining([
        { field: 'purpose', before: '', after: 'TREAT' },
        { field: 'source', before: '', after: 'operator' },
        { field: 'createdBy', before: '', after: 'ops-carl' },
      ]),
    );

    // the same again changes nothing (and records nothing)
    expect((await run(['relate', 'rel-lab', 'demo-patient-3'])).out).toMatch(/^already related \(nothing changed\):/);
    expect((await trail().forResource('partner', 'rel-lab')).filter((r) => r.action === 'admin.relationship.relate')).toHaveLength(1);
  });

  it('--purpose and --until change a holding relationship (its since and maker stay); --until DATE holds through that day, UTC', async () => {
    const now = () => new Date('2026-12-07T12:00:00Z');
    expect((await run(['relate', 'rel-lab', 'demo-patient-4', '--purpose', 'TREAT'], now)).code).toBe(0);
    const first = await relationship('rel-lab', 'demo-patient-4');
    const changed = await run(['relate', 'rel-lab', 'demo-patient-4', '--purpose', 'COC', '--until', '2027-06-30', '--json'], now);
    expect(changed.code).toBe(0);
    expect(JSON.parse(changed.out)).toMatchObject({
      outcome: 'updated',
      relationship: { purpose: 'COC', until: '2027-07-01T00:00:00.000Z', since: first!.since, holds: true },
    });
    expect(await relationship('rel-lab', 'demo-patient-4')).toMatchObject({ purpose: 'COC', until: '2027-07-01T00:00:00.000Z', since: first!.since });
    expect((await run(['relate', 'rel-lab', 'demo-patient-4', '--until', '2027-01-31T17:00:00+01:00'], now)).out).toContain('until 2027-01-31T16:00:00.000Z');
    // past its until it no longer holds: relate makes it anew
    const later = () => new Date('2027-02-01T00:00:00Z');
    expect(JSON.parse((await run(['relate', 'rel-lab', 'demo-patient-4', '--json'], later)).out)).toMatchObject({
      outcome: 'created',
      relationship: { purpose: 'TREAT', since: '2027-02-01T00:00:00.000Z', holds: true },
    });
  });

  it('refuses an unknown partner or a patient not in the chart (exit 1, nothing written); malformed arguments are wrong usage (exit 2)', async () => {
    const unknownPartner = await run(['relate', 'no-such-lab', 'demo-patient-1']);
    expect(unknownPartner).toMatchObject({ code: 1, err: 'unknown partner no-such-lab; nothing changed\n' });
    expect(await relationship('no-such-lab', 'demo-patient-1')).toBeUndefined();
    const unknownPatient = await run(['relate', 'rel-lab', 'no-such-patient']);
    expect(unknownPatient.code).toBe(1);
    expect(unknownPatient.err).toMatch(/^no chart patient no-such-patient .*; nothing changed\n$/);
    expect(await relationship('rel-lab', 'no-such-patient')).toBeUndefined();

    for (const [argv, message] of [
      [['relate', 'rel-lab'], /^relate takes a partner id and a patient id/],
      [['relate', 'rel-lab', 'demo-patient-1', '--purpose', 'FUN'], /^--purpose must be one of TREAT, ETREAT/],
      [['relate', 'rel-lab', 'demo-patient-1', '--until', '2027-02-30'], /^--until must be a date YYYY-MM-DD/],
      [['relate', 'rel-lab', 'demo-patient-1', '--until', 'tomorrow'], /^--until must be a date YYYY-MM-DD/],
      [['relate', 'rel-lab', 'demo-patient-1', '--until', '2020-01-01'], /^--until must be in the future/],
      [['relate', 'Rel Lab', 'demo-patient-1'], /^partner id must be/],
      [['relate', 'rel-lab', 'demo patient'], /^patient id must be/],
      [['unrelate', 'rel-lab'], /^unrelate takes a partner id and a patient id/],
      [['relations'], /^relations takes one partner id/],
      [['relations', 'rel-lab', '--patient', 'demo-patient-1'], /^relations takes a partner id or --patient, not both/],
    ] as const) {
      const r = await run([...argv]);
      expect([argv, r.code]).toEqual([argv, 2]);
      expect(r.err).toMatch(message);
      expect(r.err).toMatch(/\(see `npm run partners -- --help`\)\n$/);
    }
    expect(await relationship('rel-lab', 'demo-patient-1')).toBeUndefined();
  });

  it('unrelate ends it (kept, with endedAt and endedBy), audited; a second unrelate is refused; relations lists both sides, ended ones too', async () => {
    expect((await run(['relate', 'rel-lab', 'demo-patient-5'])).code).toBe(0);
    const ended = await asOperator('ops-dana', () => run(['unrelate', 'rel-lab', 'demo-patient-5']));
    expect(ended).toEqual({
      code: 0,
      out: 'ended the relationship of partner rel-lab with patient demo-patient-5 on local stack (from the next request on)\n',
      err: '',
    });
    const stored = await relationship('rel-lab', 'demo-patient-5');
    expect(stored).toMatchObject({ endedBy: 'ops-dana', source: 'operator' });
    expect(relationshipHolds(stored, new Date())).toBe(false);
    const record = (await trail().forPatient('demo-patient-5')).find((r) => r.action === 'admin.relationship.unrelate');
    expect(record).toMatchObject({ operator: 'ops-dana', partnerId: 'rel-lab', patientId: 'demo-patient-5' });
    expect(record?.changes).toEqual(expect.arrayContaining([{ field: 'endedBy', before: '', after: 'ops-dana' }]));

    expect(await run(['unrelate', 'rel-lab', 'demo-patient-5'])).toMatchObject({
      code: 1,
      err: 'partner rel-lab has no holding relationship with patient demo-patient-5; nothing changed\n',
    });
    expect(await run(['unrelate', 'no-such-lab', 'demo-patient-5'])).toMatchObject({ code: 1, err: 'unknown partner no-such-lab; nothing changed\n' });

    const ofPartner = await run(['relations', 'rel-lab']);
    expect(ofPartner.out.split('\n')[0]).toMatch(/^PARTNER\s+PATIENT\s+HOLDS\s+PURPOSE\s+SOURCE\s+SINCE\s+UNTIL\s+CREATED BY\s+ENDED\s+ENDED BY$/);
    expect(ofPartner.out).toMatch(/\nrel-lab\s+demo-patient-3\s+yes\s+TREAT\s+operator\s/);
    expect(ofPartner.out).toMatch(/\nrel-lab\s+demo-patient-5\s+no\s+TREAT\s+operator\s.*ops-dana\n/);
    const ofPatient = JSON.parse((await run(['relations', '--patient', 'demo-patient-5', '--json'])).out) as Array<{
      partnerId: string;
      holds: boolean;
      source: string;
    }>;
    // the demo data relates demo-lab and demo-forms to every demo patient
    expect(ofPatient).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ partnerId: 'demo-lab', holds: true, source: 'demo' }),
        expect.objectContaining({ partnerId: 'rel-lab', holds: false, source: 'operator' }),
      ]),
    );
    expect(await run(['relations', 'no-such-lab'])).toMatchObject({ code: 1, err: 'unknown partner no-such-lab\n' });
  });
});
