/**
 * The patient match index: how the matcher finds candidates by last name + date of birth without
 * scanning the chart and without a name or a birth date in any key.
 *
 *   forms table item   pk MATCHIDX#v1#<HMAC-SHA256(key, ["match-index", normalised last name, dob])>
 *                      sk PATIENT#<patientId>        attributes: patientId, indexedAt
 *
 * The chart import calls indexPatientForMatching for every patient it writes (idempotent put).
 * A patient whose name or birth date changes leaves an old entry behind; the matcher re-reads
 * every candidate from the chart and drops those that no longer match, so stale entries cost a
 * read, never a wrong match. Patients without a birth date or last name are not indexed (the
 * matcher never routes a packet without a date of birth either).
 *
 * Needs: forms table write, KMS GenerateDataKey + Decrypt (the HMAC key is created on first use).
 */
import type { Patient } from '../chart/types';
import { formsDependencies, type FormsDeps } from './dependencies';
import { matchIndexKey } from './match-keys';

export interface IndexOptions {
  deps?: Pick<FormsDeps, 'store' | 'keys'>;
  now?: Date;
}

/** Adds one patient to the match index. Returns false when the patient has no last name or birth date. */
export async function indexPatientForMatching(patient: Patient, options: IndexOptions = {}): Promise<boolean> {
  return (await indexPatientsForMatching([patient], options)) === 1;
}

/** Adds many patients (8 writes in flight at a time). Returns how many were indexed. */
export async function indexPatientsForMatching(patients: readonly Patient[], options: IndexOptions = {}): Promise<number> {
  const deps = options.deps ?? formsDependencies();
  const now = options.now ?? new Date();
  const key = await deps.keys().key({ create: true, now });
  if (!key) throw new Error('match index key unavailable');
  const store = deps.store();
  const at = now.toISOString();
  const entries = patients
    .map((p) => ({ patientId: p.patientId, indexKey: matchIndexKey(key, p.name?.family, p.birthDate) }))
    .filter((e): e is { patientId: string; indexKey: string } => typeof e.indexKey === 'string');
  for (let i = 0; i < entries.length; i += 8) {
    await Promise.all(entries.slice(i, i + 8).map((e) => store.putMatchIndexEntry(e.indexKey, e.patientId, at)));
  }
  return entries.length;
}
