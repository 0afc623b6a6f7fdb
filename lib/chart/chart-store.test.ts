import {
  BatchGetItemCommand,
  BatchWriteItemCommand,
  GetItemCommand,
  QueryCommand,
  ThrottlingException,
  ProvisionedThroughputExceededException,
  type BatchWriteItemCommandOutput,
} from '@aws-sdk/client-dynamodb';
import { DependencyUnavailableError } from '../domain-errors';
import { ChartStore, InvalidChartRecordError, chartItem, timelineInstant } from './chart-store';
import { assessmentContext, noteContext } from './record-context';
import { startLocalDynamoDb, type LocalDynamoDb } from './testing/local-dynamodb';
import type { Assessment, ChartRecord, Encounter, Note, Patient } from './types';

let local: LocalDynamoDb;
let table: string;
let store: ChartStore;
let tableCount = 0;

/** A fresh, empty chart table for tests that count items. */
async function freshStore(): Promise<ChartStore> {
  const names = await local.createTables(`chart-store-test-${++tableCount}`);
  return new ChartStore(local.db, names.chart);
}

/** `kind:id` of a timeline record, for readable ordering assertions. */
function label(record: ChartRecord): string {
  switch (record.kind) {
    case 'encounter':
      return `encounter:${record.record.encounterId}`;
    case 'note':
      return `note:${record.record.noteId}`;
    case 'assessment':
      return `assessment:${record.record.assessmentId}`;
  }
}

const clinician = { id: 'clin-1', name: { family: 'Practitioner', given: 'Pat' } };

const patient1: Patient = {
  patientId: 'p1',
  mrn: 'MRN-1',
  assigningAuthority: 'TEST-HOSP',
  name: { family: 'Sample', given: 'Alex' },
  birthDate: '1980-04-12',
  sex: 'F',
  address: { line1: '1 Test St', city: 'Springfield' },
  nextOfKin: [{ name: { family: 'Sample', given: 'Jordan' }, relationship: { code: 'SPO', system: 'HL70063' } }],
};
const patient2: Patient = { patientId: 'p2', mrn: 'MRN-2', assigningAuthority: 'TEST-HOSP', name: { family: 'Ødegård', given: 'Zoë' } };

const encounter1: Encounter = {
  patientId: 'p1',
  encounterId: 'e1',
  patientClass: 'O',
  admitAt: '2024-01-15T09:00:00Z',
  attending: clinician,
  diagnoses: [{ code: 'E11.9', display: 'Type 2 diabetes mellitus without complications', system: 'I10' }],
  orders: [{ orderId: 'o1', code: { code: '4548-4', system: 'LN' }, status: 'CM' }],
};
// 22:10 at -05:00 is 03:10Z the next day: later than note1 although its local string sorts earlier
const encounter2: Encounter = { patientId: 'p1', encounterId: 'e2', patientClass: 'E', admitAt: '2024-05-20T22:10:00-05:00' };
const note1: Note = { patientId: 'p1', noteId: 'n1', encounterId: 'e1', author: clinician, createdAt: '2024-05-21T01:00:00Z', text: 'first note' };
const note2: Note = { patientId: 'p2', noteId: 'n2', author: clinician, createdAt: '2024-03-05T10:30:00+01:00', text: 'Pain 7|10 ^ ok\nSecond line: café' };
const noteWithoutEncounter: Note = { patientId: 'p1', noteId: 'n3', author: clinician, createdAt: '2023-12-01T08:00:00Z', text: 'no encounter' };
const assessment1: Assessment = {
  patientId: 'p1',
  assessmentId: 'a1',
  encounterId: 'e2',
  code: { code: '44249-1', system: 'LN' },
  performedAt: '2024-09-10T14:20:00.250+02:00',
  items: [
    { code: { code: '44250-9', system: 'LN' }, kind: 'numeric', value: 2 },
    { code: { code: 'CC', system: 'L' }, kind: 'text', value: 'free text' },
    { code: { code: '72166-2', system: 'LN' }, kind: 'coded', value: { code: '8517006', display: 'Ex-smoker', system: 'SCT' } },
  ],
  total: 2,
  interpretation: 'Minimal',
};

beforeAll(async () => {
  local = await startLocalDynamoDb();
  table = (await local.createTables('chart-store-test')).chart;
  store = new ChartStore(local.db, table);
  await store.putPatient(patient1);
  await store.putPatient(patient2);
  await store.putEncounter(encounter1);
  await store.putEncounter(encounter2);
  await store.putNote(note1);
  await store.putNote(note2);
  await store.putNote(noteWithoutEncounter);
  await store.putAssessment(assessment1);
});

afterAll(async () => {
  await local.stop();
});

afterEach(() => {
  jest.restoreAllMocks();
});

describe('get by id', () => {
  it('returns each kind exactly as stored', async () => {
    expect(await store.getPatient('p1')).toEqual(patient1);
    expect(await store.getEncounter('p1', 'e1')).toEqual(encounter1);
    expect(await store.getNote('p1', 'n1')).toEqual(note1);
    expect(await store.getNote('p2', 'n2')).toEqual(note2);
    expect(await store.getAssessment('p1', 'a1')).toEqual(assessment1);
  });

  it('returns undefined for unknown ids', async () => {
    expect(await store.getPatient('nobody')).toBeUndefined();
    expect(await store.getEncounter('p1', 'missing')).toBeUndefined();
    expect(await store.getNote('p1', 'missing')).toBeUndefined();
    expect(await store.getAssessment('p1', 'missing')).toBeUndefined();
  });

  it("does not find another patient's record under this patient", async () => {
    expect(await store.getNote('p1', 'n2')).toBeUndefined();
    expect(await store.getNote('p2', 'n1')).toBeUndefined();
    expect(await store.getPatientWith('p1', 'note', 'n2')).toEqual({ patient: patient1, record: undefined });
    expect(await noteContext(store, 'p1', 'n2')).toEqual({ patient: patient1, record: undefined });
  });

  it('does not mix kinds: an encounter id asked as a note is not found', async () => {
    expect(await store.getNote('p1', 'e1')).toBeUndefined();
  });

  it('answers not found without a call for ids that cannot exist', async () => {
    const send = jest.spyOn(local.db, 'send');
    expect(await store.getPatient('p1#NOTE')).toBeUndefined();
    expect(await store.getNote('p1', 'x'.repeat(129))).toBeUndefined();
    expect(await store.getPatientWith('', 'note', 'n1')).toEqual({});
    expect(send).not.toHaveBeenCalled();
  });
});

describe('reads for the exports', () => {
  it('getPatientWith fetches patient and record in one BatchGetItem', async () => {
    const send = jest.spyOn(local.db, 'send');
    expect(await store.getPatientWith('p1', 'encounter', 'e1')).toEqual({ patient: patient1, record: encounter1 });
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0][0]).toBeInstanceOf(BatchGetItemCommand);
  });

  it('getPatientWith reports a missing patient and a missing record separately', async () => {
    expect(await store.getPatientWith('nobody', 'assessment', 'a1')).toEqual({ patient: undefined, record: undefined });
    expect(await store.getPatientWith('p1', 'assessment', 'missing')).toEqual({ patient: patient1, record: undefined });
  });

  it("noteContext adds the note's encounter with one more GetItem", async () => {
    const send = jest.spyOn(local.db, 'send');
    expect(await noteContext(store, 'p1', 'n1')).toEqual({ patient: patient1, record: note1, encounter: encounter1 });
    expect(send.mock.calls.map(([command]) => command.constructor)).toEqual([BatchGetItemCommand, GetItemCommand]);
  });

  it('noteContext makes one call when the note names no encounter', async () => {
    const send = jest.spyOn(local.db, 'send');
    expect(await noteContext(store, 'p1', 'n3')).toEqual({ patient: patient1, record: noteWithoutEncounter });
    expect(send).toHaveBeenCalledTimes(1);
  });

  it("assessmentContext adds the assessment's encounter", async () => {
    expect(await assessmentContext(store, 'p1', 'a1')).toEqual({ patient: patient1, record: assessment1, encounter: encounter2 });
  });

  it('retries unprocessed BatchGetItem keys', async () => {
    const realSend = local.db.send.bind(local.db) as (command: unknown) => Promise<unknown>;
    jest.spyOn(local.db, 'send').mockImplementationOnce((async (command: BatchGetItemCommand) => {
      const keys = command.input.RequestItems![table].Keys!;
      const first = (await realSend(
        new BatchGetItemCommand({ RequestItems: { [table]: { ...command.input.RequestItems![table], Keys: keys.slice(0, 1) } } }),
      )) as {
        Responses: Record<string, unknown[]>;
      };
      return { ...first, UnprocessedKeys: { [table]: { ...command.input.RequestItems![table], Keys: keys.slice(1) } } };
    }) as never);
    expect(await store.getPatientWith('p1', 'note', 'n1')).toEqual({ patient: patient1, record: note1 });
  });
});

describe('recentRecords / getPatientSummary', () => {
  it('orders records of every kind newest first by UTC instant', async () => {
    const records = await store.recentRecords('p1', 10);
    expect(records.map(label)).toEqual([
      'assessment:a1', // 2024-09-10T12:20:00.250Z
      'encounter:e2', // 2024-05-21T03:10:00Z
      'note:n1', // 2024-05-21T01:00:00Z
      'encounter:e1', // 2024-01-15T09:00:00Z
      'note:n3', // 2023-12-01T08:00:00Z
    ]);
    expect(records[0]).toEqual({ kind: 'assessment', at: assessment1.performedAt, record: assessment1 });
  });

  it('honours the limit', async () => {
    const records = await store.recentRecords('p1', 2);
    expect(records.map((r) => r.kind)).toEqual(['assessment', 'encounter']);
    expect(await store.recentRecords('p1', 0)).toEqual([]);
  });

  it('only returns records of the patient asked for', async () => {
    expect(await store.recentRecords('p2', 10)).toEqual([{ kind: 'note', at: note2.createdAt, record: note2 }]);
    expect(await store.recentRecords('nobody', 10)).toEqual([]);
  });

  it('getPatientSummary returns the patient and the records in one Query', async () => {
    const send = jest.spyOn(local.db, 'send');
    const summary = await store.getPatientSummary('p1', 3);
    expect(summary.patient).toEqual(patient1);
    expect(summary.records.map((r) => r.kind)).toEqual(['assessment', 'encounter', 'note']);
    expect(send).toHaveBeenCalledTimes(1);
    expect(send.mock.calls[0][0]).toBeInstanceOf(QueryCommand);
    expect((send.mock.calls[0][0] as QueryCommand).input).toMatchObject({ IndexName: 'byTimeline', ScanIndexForward: false, Limit: 4 });
  });

  it('getPatientSummary of a patient without records returns the patient only', async () => {
    const own = await freshStore();
    await own.putPatient({ ...patient1, patientId: 'lonely' });
    expect(await own.getPatientSummary('lonely', 5)).toEqual({ patient: { ...patient1, patientId: 'lonely' }, records: [] });
  });

  it('rejects a negative or fractional limit', async () => {
    await expect(store.recentRecords('p1', -1)).rejects.toThrow(RangeError);
    await expect(store.recentRecords('p1', 1.5)).rejects.toThrow(RangeError);
  });

  it('paginates past the 1 MB page size until the limit is reached', async () => {
    const own = await freshStore();
    await own.putPatient({ ...patient1, patientId: 'big' });
    const bigText = 'x'.repeat(60_000);
    const notes: Note[] = Array.from({ length: 24 }, (_, i) => ({
      patientId: 'big',
      noteId: `big-${String(i).padStart(2, '0')}`,
      author: clinician,
      createdAt: new Date(Date.UTC(2024, 0, 1 + i)).toISOString(),
      text: bigText,
    }));
    await own.putAll(notes.map((record) => ({ kind: 'note' as const, record })));
    const send = jest.spyOn(local.db, 'send');
    const records = await own.recentRecords('big', 22);
    expect(records).toHaveLength(22);
    expect(records.map(label)).toEqual(
      notes
        .slice(2)
        .map((n) => `note:${n.noteId}`)
        .reverse(),
    );
    expect(send.mock.calls.length).toBeGreaterThan(1); // more than one page was needed
  });
});

describe('writers', () => {
  it('stores keys, kind, timeline and the record map', () => {
    const item = chartItem({ kind: 'encounter', record: encounter2 });
    expect(item.pk).toEqual({ S: 'PATIENT#p1' });
    expect(item.sk).toEqual({ S: 'ENCOUNTER#e2' });
    expect(item.kind).toEqual({ S: 'encounter' });
    expect(item.timeline).toEqual({ S: '2024-05-21T03:10:00.000Z#encounter#e2' });
    expect(item.record.M?.admitAt).toEqual({ S: '2024-05-20T22:10:00-05:00' });
    expect(chartItem({ kind: 'patient', record: patient1 })).toMatchObject({ sk: { S: 'PATIENT' }, timeline: { S: 'PATIENT' } });
    expect(chartItem({ kind: 'note', record: note1 }).sk).toEqual({ S: 'NOTE#n1' });
    expect(chartItem({ kind: 'assessment', record: assessment1 }).timeline).toEqual({ S: '2024-09-10T12:20:00.250Z#assessment#a1' });
  });

  it('normalises instants to fixed-width UTC', () => {
    expect(timelineInstant('2024-01-01T00:30:00+01:00')).toBe('2023-12-31T23:30:00.000Z');
    expect(timelineInstant('2024-01-01T00:30:00.123456Z')).toBe('2024-01-01T00:30:00.123Z');
    expect(timelineInstant('2024-01-01T00:30:00')).toBeUndefined();
    expect(timelineInstant('2016-12-31T23:59:60Z')).toBeUndefined();
    expect(timelineInstant('2024-02-30T00:00:00Z')).toBeUndefined();
  });

  it('puts are upserts', async () => {
    const own = await freshStore();
    await own.putNote(note1);
    await own.putNote({ ...note1, text: 'amended' });
    expect((await own.getNote('p1', 'n1'))?.text).toBe('amended');
    expect(await own.recentRecords('p1', 10)).toHaveLength(1);
  });

  it('refuses records that cannot be keyed, naming the field but not the value', async () => {
    const send = jest.spyOn(local.db, 'send');
    await expect(store.putNote({ ...note1, noteId: 'has space' })).rejects.toThrow(new InvalidChartRecordError('note', 'noteId', 'is not a valid chart id'));
    await expect(store.putPatient({ ...patient1, patientId: 'PATIENT#x' })).rejects.toThrow(InvalidChartRecordError);
    const error = await store.putEncounter({ ...encounter1, admitAt: '15/01/2024' }).catch((e: Error) => e);
    expect(error).toBeInstanceOf(InvalidChartRecordError);
    expect((error as Error).message).toBe('encounter.admitAt is not an ISO 8601 date-time with an offset');
    expect(send).not.toHaveBeenCalled();
  });

  it('putAll writes chunks of 25 with BatchWriteItem', async () => {
    const own = await freshStore();
    const notes: Note[] = Array.from({ length: 60 }, (_, i) => ({
      ...note1,
      noteId: `bulk-${i}`,
      createdAt: new Date(Date.UTC(2024, 0, 1, 0, i)).toISOString(),
    }));
    const send = jest.spyOn(local.db, 'send');
    expect(await own.putAll(notes.map((record) => ({ kind: 'note' as const, record })))).toBe(60);
    const sizes = send.mock.calls.map(([command]) => {
      expect(command).toBeInstanceOf(BatchWriteItemCommand);
      return Object.values((command as BatchWriteItemCommand).input.RequestItems!)[0].length;
    });
    expect(sizes).toEqual([25, 25, 10]);
    send.mockRestore();
    expect(await own.recentRecords('p1', 100)).toHaveLength(60);
  });

  it('putAll retries unprocessed items', async () => {
    const own = await freshStore();
    const realSend = local.db.send.bind(local.db) as (command: unknown) => Promise<unknown>;
    const send = jest.spyOn(local.db, 'send').mockImplementationOnce((async (command: BatchWriteItemCommand) => {
      const [tableName, requests] = Object.entries(command.input.RequestItems!)[0];
      await realSend(new BatchWriteItemCommand({ RequestItems: { [tableName]: requests.slice(0, 2) } }));
      return { UnprocessedItems: { [tableName]: requests.slice(2) }, $metadata: {} } satisfies BatchWriteItemCommandOutput;
    }) as never);
    const notes: Note[] = Array.from({ length: 5 }, (_, i) => ({ ...note1, noteId: `retry-${i}` }));
    await own.putAll(notes.map((record) => ({ kind: 'note' as const, record })));
    expect(send).toHaveBeenCalledTimes(2);
    expect(
      (send.mock.calls[1][0] as BatchWriteItemCommand).input.RequestItems![
        Object.keys((send.mock.calls[1][0] as BatchWriteItemCommand).input.RequestItems!)[0]
      ],
    ).toHaveLength(3);
    for (const note of notes) expect(await own.getNote('p1', note.noteId)).toEqual(note);
  });

  it('putAll writes entries with the same key once, the last winning', async () => {
    const own = await freshStore();
    expect(
      await own.putAll([
        { kind: 'note', record: note1 },
        { kind: 'note', record: { ...note1, text: 'second' } },
      ]),
    ).toBe(1);
    expect((await own.getNote('p1', 'n1'))?.text).toBe('second');
  });
});

describe('dependency failures', () => {
  const throttled = () => new ThrottlingException({ message: 'Rate of requests exceeds the allowed throughput.', $metadata: { httpStatusCode: 400 } });

  it.each([
    ['getPatient', () => store.getPatient('p1')],
    ['getNote', () => store.getNote('p1', 'n1')],
    ['getPatientWith', () => store.getPatientWith('p1', 'note', 'n1')],
    ['noteContext', () => noteContext(store, 'p1', 'n1')],
    ['recentRecords', () => store.recentRecords('p1', 5)],
    ['putNote', () => store.putNote(note1)],
    ['putAll', () => store.putAll([{ kind: 'note', record: note1 }])],
  ])('%s turns a ThrottlingException into DependencyUnavailableError', async (_name, run) => {
    jest.spyOn(local.db, 'send').mockRejectedValue(throttled() as never);
    const error = await (run as () => Promise<unknown>)().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DependencyUnavailableError);
    expect((error as DependencyUnavailableError).dependency).toBe('chart-table');
    expect((error as Error).cause).toBeInstanceOf(ThrottlingException);
  });

  it('turns provisioned-throughput and 5xx failures into DependencyUnavailableError', async () => {
    jest
      .spyOn(local.db, 'send')
      .mockRejectedValueOnce(new ProvisionedThroughputExceededException({ message: 'exceeded', $metadata: {} }) as never)
      .mockRejectedValueOnce(Object.assign(new Error('internal'), { name: 'InternalServerError', $metadata: { httpStatusCode: 500 } }) as never);
    await expect(store.getPatient('p1')).rejects.toBeInstanceOf(DependencyUnavailableError);
    await expect(store.getPatient('p1')).rejects.toBeInstanceOf(DependencyUnavailableError);
  });

  it('gives up on items that stay unprocessed with DependencyUnavailableError', async () => {
    jest
      .spyOn(local.db, 'send')
      .mockImplementation((async (command: BatchWriteItemCommand) => ({ UnprocessedItems: command.input.RequestItems, $metadata: {} })) as never);
    await expect(store.putAll([{ kind: 'note', record: note1 }])).rejects.toBeInstanceOf(DependencyUnavailableError);
  }, 15_000);

  it('passes other errors through unchanged (a missing table is a configuration error, not a 503)', async () => {
    const error = await new ChartStore(local.db, 'no-such-table').getPatient('p1').catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(DependencyUnavailableError);
    expect((error as Error).name).toBe('ResourceNotFoundException');
  });
});
