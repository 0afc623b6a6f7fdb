/**
 * routeHeld with in-memory parts: the writes come before markRouted, so a failure in between leaves
 * the record held and the same route again completes it; a different note under the document id is
 * a 409 that changes nothing; a routed record is 409 with routedTo.
 */
import type { Note, Patient } from '../chart/types';
import { RecordNotFoundError } from '../domain-errors';
import type { HeldRecord } from './held-records';
import { getHeld, HeldAlreadyRoutedError, HeldNoteConflictError, listHeld, type HeldReviewDependencies } from './held-review';
import { routeHeld } from './held-route';
import type { PartnerPatientRelationship } from '../relationships/relationships';

const heldId = 'held-20240305101500-3f2a9c0d1e4b5a6978877665';
const provenance = { partnerId: 'demo-lab', sender: 'DEMO-LAB-LIS', sourceMessageId: 'M1', receivedAt: '2024-03-05T10:15:00.000Z' };
const note: Omit<Note, 'patientId'> = {
  noteId: 'demo-lab:DOC-1',
  documentNumber: 'DOC-1',
  author: { name: { family: 'Doc' } },
  createdAt: '2024-03-05T09:00:00.000Z',
  text: 'text',
  provenance,
  version: 1,
};
const reviewer = { keyId: 'key_1', partnerId: 'demo-staff' };

function fakes(record: HeldRecord) {
  const notes = new Map<string, Note>();
  const links = new Map<string, string>();
  const relationships: PartnerPatientRelationship[] = [];
  const state = { record: { ...record }, failMarkRouted: 0 };
  const deps: HeldReviewDependencies = {
    held: {
      get: async () => ({ ...state.record }),
      list: async () => [state.record],
      markRouted: async (_id, patientId, routedBy, at) => {
        if (state.failMarkRouted-- > 0) throw new Error('chart table unavailable');
        if (state.record.state !== 'held') return false;
        state.record = { ...state.record, state: 'routed', routedTo: patientId, routedBy, routedAt: at.toISOString() };
        return true;
      },
      markUnlinked: async () => false,
    },
    identities: {
      get: async () => undefined,
      linkByStaff: async (key, patientId) => {
        links.set(key, patientId);
        return true;
      },
      unlinkByStaff: async () => false,
    },
    relationships: {
      relate: async (relationship) => {
        relationships.push(relationship);
        return { relationship, created: true };
      },
      unrelate: async () => undefined,
    },
    chart: {
      getPatient: async (patientId) => (patientId.startsWith('demo-patient') ? ({ patientId } as Patient) : undefined),
      getNote: async (patientId, noteId) => notes.get(`${patientId}/${noteId}`),
      putNoteIfAbsent: async (n) => {
        if (notes.has(`${n.patientId}/${n.noteId}`)) return false;
        notes.set(`${n.patientId}/${n.noteId}`, n);
        return true;
      },
    },
  };
  return { deps, notes, links, state };
}

const documentRecord: HeldRecord = {
  heldId,
  state: 'held',
  provenance,
  person: { identifiers: [{ value: 'L1', authority: 'DEMO-LAB' }] },
  body: { kind: 'document', note },
  reason: 'patient-unresolved',
};
const input = (patientId: string) => ({ heldId, patientId, reviewer, requestId: 'r1', now: new Date('2024-03-06T00:00:00Z') });

describe('routeHeld', () => {
  it('a failure after the note was written leaves the record held; the same route again completes it', async () => {
    const { deps, notes, state } = fakes(documentRecord);
    state.failMarkRouted = 1;
    await expect(routeHeld(deps, input('demo-patient-1'))).rejects.toThrow('chart table unavailable');
    expect(notes.size).toBe(1);
    expect(state.record.state).toBe('held');
    await expect(routeHeld(deps, input('demo-patient-1'))).resolves.toMatchObject({ kind: 'document', routedTo: 'demo-patient-1', noteId: note.noteId });
    expect(state.record).toMatchObject({ state: 'routed', routedTo: 'demo-patient-1', routedBy: 'key_1' });
    const again = routeHeld(deps, input('demo-patient-1'));
    await expect(again).rejects.toBeInstanceOf(HeldAlreadyRoutedError);
    await expect(again).rejects.toMatchObject({ extensions: { routedTo: 'demo-patient-1' } });
  });

  it('another note under the document id: 409, nothing changed, still held', async () => {
    const { deps, notes, state } = fakes(documentRecord);
    notes.set(`demo-patient-2/${note.noteId}`, { ...note, patientId: 'demo-patient-2', text: 'other text' });
    await expect(routeHeld(deps, input('demo-patient-2'))).rejects.toBeInstanceOf(HeldNoteConflictError);
    expect(notes.get(`demo-patient-2/${note.noteId}`)!.text).toBe('other text');
    expect(state.record.state).toBe('held');
  });

  it('the same document filed already with its times in the sender offset (the held copy in UTC, held before that release): routed, not 409', async () => {
    const { deps, notes, state } = fakes({ ...documentRecord, body: { kind: 'document', note: { ...note, authenticatedAt: '2024-03-05T09:30:00.000Z' } } });
    const filed = { ...note, patientId: 'demo-patient-2', createdAt: '2024-03-05T04:00:00-05:00', authenticatedAt: '2024-03-05T10:30:00+01:00' };
    notes.set(`demo-patient-2/${note.noteId}`, filed);
    await expect(routeHeld(deps, input('demo-patient-2'))).resolves.toMatchObject({ kind: 'document', routedTo: 'demo-patient-2', noteId: note.noteId });
    expect(notes.get(`demo-patient-2/${note.noteId}`)).toEqual(filed);
    expect(state.record.state).toBe('routed');
    // another instant is another document
    const other = fakes(documentRecord);
    other.notes.set(`demo-patient-2/${note.noteId}`, { ...note, patientId: 'demo-patient-2', createdAt: '2024-03-05T09:00:00-05:00' });
    await expect(routeHeld(other.deps, input('demo-patient-2'))).rejects.toBeInstanceOf(HeldNoteConflictError);
    expect(other.state.record.state).toBe('held');
  });

  it('an unknown patient is 404 before anything is written', async () => {
    const { deps, notes } = fakes(documentRecord);
    await expect(routeHeld(deps, input('nobody'))).rejects.toBeInstanceOf(RecordNotFoundError);
    expect(notes.size).toBe(0);
  });

  it('an identity is linked by staff, then marked routed', async () => {
    const { deps, links, state } = fakes({ ...documentRecord, body: { kind: 'identity', identityKey: 'demo-lab#abc' } });
    await routeHeld(deps, input('demo-patient-2'));
    expect(links.get('demo-lab#abc')).toBe('demo-patient-2');
    expect(state.record.routedTo).toBe('demo-patient-2');
  });

  it('lab results without the result services is an error, not a silent route', async () => {
    const { deps, state } = fakes({ ...documentRecord, body: { kind: 'lab-result', resultIds: ['lr_1'] } });
    await expect(routeHeld(deps, input('demo-patient-2'))).rejects.toThrow();
    expect(state.record.state).toBe('held');
  });
});

describe('listHeld', () => {
  it('the list item describes a document without its text; a bad cursor is refused', async () => {
    const { deps } = fakes(documentRecord);
    const page = await listHeld(deps, { state: 'held', limit: 5 });
    expect(page.items[0]).toMatchObject({ heldId, kind: 'document', description: { author: note.author, createdAt: note.createdAt } });
    expect(JSON.stringify(page)).not.toContain('"text"');
    await expect(listHeld(deps, { state: 'held', limit: 5, cursor: 'nope' })).rejects.toMatchObject({ parameter: 'cursor' });
  });
});

describe('getHeld', () => {
  it("an identity shows the partner's demographics, visits, diagnoses and allergies (issue 27 item 7)", async () => {
    const { deps } = fakes({ ...documentRecord, body: { kind: 'identity', identityKey: 'demo-lab#abc' } });
    const records = {
      visits: [{ visitNumber: 'V1', patientClass: 'O', admitAt: '2024-03-01' }],
      diagnoses: [{ code: { code: 'E11.9', system: 'I10' }, type: 'W' }],
      allergies: [{ allergen: { code: 'PEANUT' }, reactions: ['Hives'] }],
    };
    deps.identities.get = async (identityKey) => ({
      identityKey,
      partnerId: 'demo-lab',
      demographics: { mrn: 'L1', assigningAuthority: 'DEMO-LAB', name: { family: 'Ida' } },
      provenance,
      ...records,
    });
    expect(await getHeld(deps, heldId)).toMatchObject({ kind: 'identity', demographics: { name: { family: 'Ida' } }, ...records });
  });
});
