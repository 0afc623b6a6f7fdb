import { BatchWriteItemCommand, GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import chartImportSchema from '../../schemas/chart-import.schema.json';
import { chartEntries, importChart, validateChartImport, type ChartImportDocument } from './chart-import';
import { CHART_ID_PATTERN, ChartStore } from './chart-store';
import { DemoChartIds, demoChartDocument, loadDemoChart } from './demo-data';
import { startLocalDynamoDb, type LocalDynamoDb } from './testing/local-dynamodb';

let local: LocalDynamoDb;
let tableCount = 0;

async function freshTable(): Promise<{ store: ChartStore; table: string }> {
  const table = (await local.createTables(`chart-import-test-${++tableCount}`)).chart;
  return { store: new ChartStore(local.db, table), table };
}

/** Every item stored under the patient's partition, read with Query (no Scan). */
async function itemsOfPatient(table: string, patientId: string): Promise<number> {
  const out = await local.db.send(
    new QueryCommand({
      TableName: table,
      KeyConditionExpression: 'pk = :pk',
      ExpressionAttributeValues: { ':pk': { S: `PATIENT#${patientId}` } },
      Select: 'COUNT',
    }),
  );
  return out.Count ?? 0;
}

beforeAll(async () => {
  local = await startLocalDynamoDb();
});

afterAll(async () => {
  await local.stop();
});

afterEach(() => {
  jest.restoreAllMocks();
});

const author = { name: { family: 'Practitioner', given: 'Pat' } };

function validDocument(): ChartImportDocument {
  return {
    patients: [
      {
        patientId: 'imp-1',
        mrn: 'MRN-1',
        assigningAuthority: 'TEST-HOSP',
        name: { family: 'Sample', given: 'Alex' },
        birthDate: '2024-02-29',
        encounters: [{ encounterId: 'enc-1', patientClass: 'O', admitAt: '2024-03-01T09:00:00Z', dischargeAt: '2024-03-01T10:00:00+01:00' }],
        notes: [{ noteId: 'note-1', encounterId: 'enc-1', author, createdAt: '2024-03-01T09:30:00Z', text: 'text' }],
        assessments: [
          {
            assessmentId: 'as-1',
            encounterId: 'enc-1',
            code: { code: '44249-1', system: 'LN' },
            performedAt: '2024-03-01T09:20:00Z',
            items: [{ code: { code: '44250-9', system: 'LN' }, kind: 'numeric', value: 1 }],
            total: 1,
          },
        ],
      },
      { patientId: 'imp-2', mrn: 'MRN-2', assigningAuthority: 'TEST-HOSP', name: { family: 'Other' } },
    ],
  };
}

describe('the schema', () => {
  it('compiles with ajv in strict mode and uses the store id pattern', () => {
    const ajv = new Ajv2020({ strict: true, allowUnionTypes: true });
    addFormats(ajv);
    expect(() => ajv.compile(chartImportSchema)).not.toThrow();
    expect(chartImportSchema.$defs.id.pattern).toBe(CHART_ID_PATTERN.source);
  });
});

describe('validateChartImport', () => {
  it('accepts a valid document and returns it', () => {
    const doc = validDocument();
    expect(validateChartImport(doc)).toEqual({ ok: true, value: doc });
  });

  it('accepts the demo chart', () => {
    const result = validateChartImport(demoChartDocument());
    expect(result.ok ? [] : result.errors).toEqual([]);
  });

  it('lists every failing pointer: schema and semantic rules in one pass', () => {
    const doc = {
      extra: true,
      patients: [
        {
          patientId: 'bad id!',
          mrn: 'MRN|1',
          assigningAuthority: 'TEST-HOSP',
          name: { given: 'NoFamily' },
          birthDate: '2023-02-29',
          sex: 'X',
          email: 'not-an-email',
          encounters: [
            { encounterId: 'enc-1', patientClass: 'Z', admitAt: '2024-03-01T09:00:00', patientId: 'bad id!' },
            { encounterId: 'enc-1', patientClass: 'O', admitAt: '2024-03-01T09:00:00Z', dischargeAt: '2024-03-01T08:00:00Z' },
            {
              encounterId: 'enc-3',
              patientClass: 'O',
              admitAt: '2016-12-31T23:59:60Z',
              orders: [
                { orderId: 'o1', code: { code: 'x' } },
                { orderId: 'o1', code: {} },
              ],
            },
          ],
          notes: [
            { noteId: 'note-1', encounterId: 'enc-404', author, createdAt: '2024-03-01T09:30:00Z' },
            { noteId: 'note-1', author: {}, createdAt: '2024-03-01', text: '' },
          ],
          assessments: [
            {
              assessmentId: 'as-1',
              code: { code: 'c' },
              performedAt: '2024-13-01T09:00:00Z',
              items: [
                { code: { code: 'a' }, kind: 'numeric', value: 'seven' },
                { code: { code: 'b' }, kind: 'coded', value: { display: 'no code' } },
                { code: { code: 'c' }, kind: 'text', value: 3 },
                { code: { code: 'd' }, kind: 'scale', value: 1 },
              ],
            },
            { assessmentId: 'as-2', code: { code: 'c' }, performedAt: '2024-03-01T09:00:00Z', items: [] },
          ],
        },
        { patientId: 'imp-2', mrn: 'MRN-2', assigningAuthority: 'TEST-HOSP', name: { family: 'Other' }, birthDate: '2999-01-01' },
        { patientId: 'imp-2', mrn: 'MRN-3', assigningAuthority: 'TEST-HOSP', name: { family: 'Other' } },
        'not a patient',
      ],
    };
    const result = validateChartImport(doc, new Date('2025-01-01T00:00:00Z'));
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.errors.map((e) => e.pointer).sort()).toEqual(
      [
        '/extra',
        '/patients/0/patientId',
        '/patients/0/mrn',
        '/patients/0/name/family',
        '/patients/0/birthDate',
        '/patients/0/sex',
        '/patients/0/email',
        '/patients/0/encounters/0/patientClass',
        '/patients/0/encounters/0/admitAt',
        '/patients/0/encounters/0/patientId',
        '/patients/0/encounters/1/encounterId', // duplicate
        '/patients/0/encounters/1/dischargeAt', // before admitAt
        '/patients/0/encounters/2/admitAt', // leap second: format-valid, not an instant
        '/patients/0/encounters/2/orders/1/orderId', // duplicate within the encounter
        '/patients/0/encounters/2/orders/1/code/code',
        '/patients/0/notes/0/text',
        '/patients/0/notes/0/encounterId', // no such encounter for this patient
        '/patients/0/notes/1/noteId', // duplicate
        '/patients/0/notes/1/author/name',
        '/patients/0/notes/1/createdAt',
        '/patients/0/notes/1/text',
        '/patients/0/assessments/0/performedAt',
        '/patients/0/assessments/0/items/0/value',
        '/patients/0/assessments/0/items/1/value/code',
        '/patients/0/assessments/0/items/2/value',
        '/patients/0/assessments/0/items/3/kind',
        '/patients/0/assessments/1/items',
        '/patients/1/birthDate', // in the future
        '/patients/2/patientId', // duplicate patient
        '/patients/3',
      ].sort(),
    );
    expect(new Set(result.errors.map((e) => e.pointer)).size).toBe(result.errors.length);
    const messageAt = (pointer: string) => result.errors.find((e) => e.pointer === pointer)?.message;
    expect(messageAt('/patients/0/sex')).toBe('must be one of A, F, M, N, O, U');
    expect(messageAt('/patients/0/notes/0/text')).toBe('is required');
    expect(messageAt('/extra')).toBe('is not a known property');
    expect(messageAt('/patients/0/notes/0/encounterId')).toBe('must name an encounter of this patient (/patients/0/encounters)');
    expect(messageAt('/patients/2/patientId')).toBe('duplicates the patientId of /patients/1');
  });

  it('never echoes values into messages', () => {
    const doc = validDocument();
    doc.patients[0].name = { family: 'Secretname' };
    doc.patients[0].mrn = 'SECRET|MRN';
    doc.patients[0].birthDate = '1999-02-30';
    doc.patients[0].notes![0].encounterId = 'secret-encounter';
    (doc.patients[0] as unknown as Record<string, unknown>).sex = 'Secretsex';
    const result = validateChartImport(doc);
    expect(result.ok).toBe(false);
    const text = JSON.stringify(result);
    for (const value of ['Secretname', 'SECRET', '1999-02-30', 'secret-encounter', 'Secretsex']) expect(text).not.toContain(value);
  });

  it('checks real calendar dates and date-time shapes', () => {
    const withBirthDate = (birthDate: string) => {
      const doc = validDocument();
      doc.patients[0].birthDate = birthDate;
      return validateChartImport(doc);
    };
    expect(withBirthDate('2024-02-29').ok).toBe(true);
    expect(withBirthDate('2023-02-29')).toEqual({
      ok: false,
      errors: [{ pointer: '/patients/0/birthDate', message: 'must be a real calendar date YYYY-MM-DD' }],
    });
    expect(withBirthDate('2023-04-31').ok).toBe(false);
    expect(withBirthDate('1990-1-1').ok).toBe(false);

    const withAdmitAt = (admitAt: string) => {
      const doc = validDocument();
      doc.patients[0].encounters![0].admitAt = admitAt;
      doc.patients[0].encounters![0].dischargeAt = undefined;
      return validateChartImport(doc).ok;
    };
    expect(withAdmitAt('2024-03-01T09:00:00.123+05:30')).toBe(true);
    for (const bad of [
      '2024-03-01T09:00:00',
      '2024-03-01 09:00:00Z',
      '2024-03-01T09:00Z',
      '2024-02-30T09:00:00Z',
      '2024-03-01T24:00:00Z',
      '2024-03-01T09:00:00+0100',
      '2024-03-01t09:00:00z',
    ]) {
      expect([bad, withAdmitAt(bad)]).toEqual([bad, false]);
    }
  });

  it('requires an object with a patients array', () => {
    expect(validateChartImport(null)).toEqual({ ok: false, errors: [{ pointer: '', message: 'must be object' }] });
    expect(validateChartImport([])).toMatchObject({ ok: false, errors: [{ pointer: '' }] });
    expect(validateChartImport({})).toEqual({ ok: false, errors: [{ pointer: '/patients', message: 'is required' }] });
    expect(validateChartImport({ patients: [] })).toMatchObject({ ok: false, errors: [{ pointer: '/patients' }] });
  });

  it('escapes property names in pointers (RFC 6901)', () => {
    const result = validateChartImport({ ...validDocument(), 'a/b~c': 1 });
    expect(result).toEqual({ ok: false, errors: [{ pointer: '/a~1b~0c', message: 'is not a known property' }] });
  });
});

describe('chartEntries', () => {
  it('gives nested records the patient id and keeps the patient without its lists', () => {
    const entries = chartEntries(validDocument());
    expect(entries.map((e) => e.kind)).toEqual(['patient', 'encounter', 'note', 'assessment', 'patient']);
    expect(entries[0].record).toEqual({
      patientId: 'imp-1',
      mrn: 'MRN-1',
      assigningAuthority: 'TEST-HOSP',
      name: { family: 'Sample', given: 'Alex' },
      birthDate: '2024-02-29',
    });
    for (const entry of entries.slice(1, 4)) expect(entry.record.patientId).toBe('imp-1');
  });
});

describe('importChart', () => {
  it('writes a valid document and reports counts', async () => {
    const { store } = await freshTable();
    const result = await importChart(store, validDocument());
    expect(result).toEqual({ ok: true, counts: { patients: 2, encounters: 1, notes: 1, assessments: 1, relationships: 0, items: 5 } });
    expect(await store.getNote('imp-1', 'note-1')).toEqual({
      patientId: 'imp-1',
      noteId: 'note-1',
      encounterId: 'enc-1',
      author,
      createdAt: '2024-03-01T09:30:00Z',
      text: 'text',
    });
    expect((await store.getPatientSummary('imp-1', 10)).records.map((r) => r.kind)).toEqual(['note', 'assessment', 'encounter']);
  });

  it('makes the relationships a patient carries (source import, purpose, until through that day), after the patients', async () => {
    const { store, table } = await freshTable();
    const doc = validDocument() as ChartImportDocument;
    doc.patients[0]!.relationships = [{ partnerId: 'clinic-forms' }, { partnerId: 'acme-lab', purpose: 'COC', until: '2027-06-30' }];
    const now = new Date('2026-12-08T00:00:00.000Z');
    const made: unknown[] = [];
    const result = await importChart(store, doc, { createdBy: 'ops@host', relate: async (r) => made.push(r) }, now);
    expect(result).toMatchObject({ ok: true, counts: { patients: 2, relationships: 2 } });
    expect(made).toEqual([
      { partnerId: 'clinic-forms', patientId: 'imp-1', purpose: 'TREAT', source: 'import', since: now.toISOString(), createdBy: 'ops@host' },
      {
        partnerId: 'acme-lab',
        patientId: 'imp-1',
        purpose: 'COC',
        source: 'import',
        since: now.toISOString(),
        until: '2027-07-01T00:00:00.000Z',
        createdBy: 'ops@host',
      },
    ]);
    // the patient record stays without the list
    expect(await store.getPatient('imp-1')).not.toHaveProperty('relationships');
    expect(await itemsOfPatient(table, 'imp-1')).toBeGreaterThan(0);
  });

  it('refuses relationships it has no writer for, and a purpose outside PurposeOfUse, writing nothing', async () => {
    const { store, table } = await freshTable();
    const doc = validDocument() as ChartImportDocument;
    doc.patients[0]!.relationships = [{ partnerId: 'clinic-forms' }];
    expect(await importChart(store, doc)).toMatchObject({ ok: false });
    (doc.patients[0]!.relationships[0] as { purpose?: string }).purpose = 'CURIOSITY';
    const invalid = await importChart(store, doc, { createdBy: 'ops', relate: async () => undefined });
    expect(invalid).toMatchObject({ ok: false, errors: [expect.objectContaining({ pointer: '/patients/0/relationships/0/purpose' })] });
    expect(await itemsOfPatient(table, 'imp-1')).toBe(0);
  });

  it('writes nothing when the document is invalid, even its valid patients', async () => {
    const { store, table } = await freshTable();
    const doc = validDocument();
    doc.patients.push({ patientId: 'imp-3', mrn: 'MRN-3', assigningAuthority: 'TEST-HOSP', name: { family: 'Valid' } });
    doc.patients[1].notes = [{ noteId: 'n', encounterId: 'enc-1', author, createdAt: '2024-03-01T09:30:00Z', text: 'encounter belongs to imp-1' }];
    const send = jest.spyOn(local.db, 'send');
    const result = await importChart(store, doc);
    expect(result).toEqual({
      ok: false,
      errors: [{ pointer: '/patients/1/notes/0/encounterId', message: 'must name an encounter of this patient (/patients/1/encounters)' }],
    });
    expect(send).not.toHaveBeenCalled();
    send.mockRestore();
    for (const patientId of ['imp-1', 'imp-2', 'imp-3']) expect(await itemsOfPatient(table, patientId)).toBe(0);
    const patientItem = await local.db.send(new GetItemCommand({ TableName: table, Key: { pk: { S: 'PATIENT#imp-1' }, sk: { S: 'PATIENT' } } }));
    expect(patientItem.Item).toBeUndefined();
  });

  it('writes with BatchWriteItem in chunks of 25', async () => {
    const { store, table } = await freshTable();
    const doc = validDocument();
    doc.patients[1].notes = Array.from({ length: 55 }, (_, i) => ({ noteId: `bulk-${i}`, author, createdAt: '2024-03-01T09:30:00Z', text: `note ${i}` }));
    const send = jest.spyOn(local.db, 'send');
    const result = await importChart(store, doc);
    expect(result).toMatchObject({ ok: true, counts: { notes: 56, items: 60 } });
    expect(send.mock.calls.map(([command]) => Object.values((command as BatchWriteItemCommand).input.RequestItems!)[0].length)).toEqual([25, 25, 10]);
    send.mockRestore();
    expect(await itemsOfPatient(table, 'imp-2')).toBe(56);
  });
});

describe('demo chart', () => {
  let store: ChartStore;
  let table: string;

  beforeAll(async () => {
    ({ store, table } = await freshTable());
  });

  it('loads idempotently', async () => {
    const first = await loadDemoChart(store);
    expect(first).toEqual({ patients: 5, encounters: 4, notes: 4, assessments: 3, relationships: 0, items: 16 });
    const before = await Promise.all(
      Object.values(DemoChartIds)
        .filter((id) => id.startsWith('demo-patient'))
        .map((id) => itemsOfPatient(table, id)),
    );
    expect(await loadDemoChart(store)).toEqual(first);
    const after = await Promise.all(
      Object.values(DemoChartIds)
        .filter((id) => id.startsWith('demo-patient'))
        .map((id) => itemsOfPatient(table, id)),
    );
    expect(after).toEqual(before);
    expect(after).toEqual([1 + 3 + 3 + 2, 1 + 1 + 1 + 1, 1, 1, 1]);
  });

  it('has the records the exports and form matching tests rely on', async () => {
    await loadDemoChart(store);
    const ids = DemoChartIds;
    const patient1 = await store.getPatient(ids.patient1);
    expect(patient1).toMatchObject({ mrn: expect.any(String), assigningAuthority: 'DEMO-HOSP', sex: 'F' });
    for (const field of [
      'address',
      'phone',
      'email',
      'maritalStatus',
      'language',
      'race',
      'ethnicity',
      'primaryCareProvider',
      'nextOfKin',
      'birthDate',
    ] as const) {
      expect(patient1?.[field]).toBeDefined();
    }
    expect(await store.getEncounter(ids.patient1, ids.encounter1)).toMatchObject({
      diagnoses: expect.arrayContaining([expect.objectContaining({ system: 'I10' })]),
      orders: expect.any(Array),
    });
    expect(await store.getNote(ids.patient1, ids.note1)).toBeDefined();
    const phq9 = await store.getAssessment(ids.patient1, ids.assessment1);
    expect(phq9?.items.every((item) => item.kind === 'numeric' && typeof item.value === 'number')).toBe(true);
    expect(phq9?.total).toBe(phq9?.items.reduce((sum, item) => sum + (item.value as number), 0));
    expect(phq9?.interpretation).toBeDefined();
    const records = await store.recentRecords(ids.patient1, 100);
    expect(records.map((r) => r.kind).sort()).toEqual(['assessment', 'assessment', 'encounter', 'encounter', 'encounter', 'note', 'note', 'note']);
    const mixed = records.find((r) => r.kind === 'assessment' && r.record.assessmentId !== ids.assessment1);
    expect(new Set(mixed?.kind === 'assessment' ? mixed.record.items.map((i) => i.kind) : [])).toEqual(new Set(['text', 'coded', 'numeric']));

    const patient2 = await store.getPatient(ids.patient2);
    expect(patient2?.name.family).toMatch(/[^\x00-\x7f]/);
    const note2 = await store.getNote(ids.patient2, ids.note2);
    for (const fragment of ['|', '^', '&', '~', '\\', '\n', 'café', 'Zoë']) expect(note2?.text).toContain(fragment);
    expect(await store.getEncounter(ids.patient2, ids.encounter2)).toBeDefined();
    expect(await store.getAssessment(ids.patient2, ids.assessment2)).toBeDefined();

    const [patient3, patient4] = [await store.getPatient(ids.patient3), await store.getPatient(ids.patient4)];
    expect(patient3?.name).toEqual(patient4?.name);
    expect(patient3?.birthDate).toEqual(patient4?.birthDate);
    expect(patient3?.mrn).not.toEqual(patient4?.mrn);

    expect(await store.getPatientSummary(ids.patient5, 10)).toMatchObject({ patient: expect.any(Object), records: [] });
  });

  it('spreads patient 1 over months', async () => {
    await loadDemoChart(store);
    const encounters = (await store.recentRecords(DemoChartIds.patient1, 100)).filter((r) => r.kind === 'encounter').map((r) => Date.parse(r.at));
    const spanDays = (Math.max(...encounters) - Math.min(...encounters)) / 86_400_000;
    expect(spanDays).toBeGreaterThan(120);
  });
});
