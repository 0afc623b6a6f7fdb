import { decodeLogicalId, isConformantId, logicalId, patientIdOf, recordIdHash, recordIdsOf } from './logical-id';

const RESULT = 'lr_0123456789abcdef0123456789abcdef';
const UUID = '3f2b8c1e-9d4a-4e7b-8c2d-1a2b3c4d5e6f';

describe('logical ids at most 64 characters (issue 27)', () => {
  test('an id that fits is written as before', () => {
    expect(logicalId('demo-patient-1', RESULT)).toBe('demo-patient-1..lr.5F0123456789abcdef0123456789abcdef');
    expect(logicalId('demo-patient-1', 'demo-note-1')).toBe('demo-patient-1..demo-note-1');
    expect(logicalId('p:1')).toBe('p.3A1');
  });

  test('a UUID patient with a lab result (75 characters before): compact, 50 characters, read back', () => {
    expect(`${UUID}..lr.5F0123456789abcdef0123456789abcdef`).toHaveLength(75);
    const id = logicalId(UUID, RESULT);
    expect(id).toMatch(/^\.U[0-9A-Za-z]{22}\.\.\.R[0-9A-Za-z]{22}$/);
    expect(isConformantId(id)).toBe(true);
    expect(decodeLogicalId(id)).toEqual({ ok: true, parts: [UUID, RESULT] });
    expect(recordIdsOf(id)).toEqual({ patientId: UUID, recordId: RESULT });
    expect(logicalId(UUID, RESULT)).toBe(id);
  });

  test('UUIDs of both cases, as patient and as record', () => {
    const upper = UUID.toUpperCase();
    const id = logicalId(upper, UUID);
    expect(id.length).toBeLessThanOrEqual(64);
    expect(recordIdsOf(id)).toEqual({ patientId: upper, recordId: UUID });
    expect(logicalId(UUID, upper)).not.toBe(id);
  });

  test('a long record id is hashed: stable, unique, found by its hash', () => {
    const patient = 'patient-0000000000001';
    const a = logicalId(patient, `encounter-${'x'.repeat(60)}-1`);
    const b = logicalId(patient, `encounter-${'x'.repeat(60)}-2`);
    expect(a.length).toBeLessThanOrEqual(64);
    expect(a).not.toBe(b);
    expect(logicalId(patient, `encounter-${'x'.repeat(60)}-1`)).toBe(a);
    expect(recordIdsOf(a)).toEqual({ patientId: patient, recordId: '', recordHash: recordIdHash(`encounter-${'x'.repeat(60)}-1`) });
  });

  test('a patient id too long for any form: hashed, not readable by id (no index from hashes)', () => {
    const patient = 'p'.repeat(100);
    const id = logicalId(patient, RESULT);
    expect(isConformantId(id)).toBe(true);
    expect(recordIdsOf(id)).toBeUndefined();
    expect(isConformantId(logicalId(patient))).toBe(true);
    expect(patientIdOf(logicalId(patient))).toBeUndefined();
  });

  test('every id of chart ids of 1..128 characters conforms', () => {
    for (const length of [1, 20, 30, 31, 32, 40, 64, 65, 100, 128]) {
      const id = 'a.b_c:d-'.repeat(16).slice(0, length);
      expect(isConformantId(logicalId(id))).toBe(true);
      expect(isConformantId(logicalId(id, id))).toBe(true);
      expect(isConformantId(logicalId(id, RESULT))).toBe(true);
    }
  });

  test('only the id written for a record reads: no second (compact) id for a short one; malformed compact parts refused', () => {
    const compact = logicalId(UUID, RESULT).split('..')[1]!;
    expect(recordIdsOf(`p1..${compact}`)).toBeUndefined();
    expect(decodeLogicalId('.Rshort')).toEqual({ ok: false });
    expect(decodeLogicalId(`.R${'z'.repeat(22)}`)).toEqual({ ok: false });
    expect(decodeLogicalId(`${compact}x`)).toEqual({ ok: false });
  });
});
