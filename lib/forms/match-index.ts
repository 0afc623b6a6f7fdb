/**
 * The patient match index: how the matcher finds candidates without scanning the chart and without
 * a name or a birth date in any key.
 *
 *   forms table item   pk MATCHIDX#v1#<HMAC blocking key>   sk PATIENT#<patientId>   (patientId, indexedAt)
 *                      pk MATCHIDX-PATIENT#<patientId>      sk v1                    (indexKeys: the keys it holds)
 *
 * The blocking keys (match-keys.ts blockingKeys) are last name + dob, each token of a
 * double-barrelled last name + dob, first name + dob and the Double Metaphone codes of the last
 * name + dob; and the MRN (match-keys.ts mrnIndexKey), which staff search by from the inbox. Every chart writer calls indexPatientsForMatching for each patient it writes
 * (through ChartPatientWriter, chart-patient-writer.ts). Re-indexing a patient puts its current
 * keys, deletes the keys its manifest lists that it no longer has (a rename, a new birth date),
 * then records the new manifest. The order makes an interruption harmless: a stale entry that
 * survives costs the matcher one chart read, never a match (the matcher re-reads and re-scores
 * every candidate from the chart).
 *
 * Needs: forms table read/write, KMS GenerateDataKey + Decrypt (the HMAC key is created on first use).
 */
import type { Patient } from '../chart/types';
import { formsDependencies, type FormsDependencies } from './forms-wiring';
import { blockingKeys, mrnIndexKey } from './match-keys';

export interface IndexOptions {
  deps?: Pick<FormsDependencies, 'store' | 'keys'>;
  now?: Date;
}

/** Writes in flight at a time while indexing. */
const CONCURRENCY = 8;

async function inBatches<T>(items: readonly T[], run: (item: T) => Promise<void>): Promise<void> {
  for (let i = 0; i < items.length; i += CONCURRENCY) await Promise.all(items.slice(i, i + CONCURRENCY).map(run));
}

/** Adds (or re-indexes) one patient. Returns false when the patient has no birth date or name to index. */
export async function indexPatientForMatching(patient: Patient, options: IndexOptions = {}): Promise<boolean> {
  return (await indexPatientsForMatching([patient], options)) === 1;
}

/**
 * Brings the index entries of each patient in step with its current name and birth date.
 * Idempotent. Returns how many patients have at least one index key.
 */
export async function indexPatientsForMatching(patients: readonly Patient[], options: IndexOptions = {}): Promise<number> {
  const deps = options.deps ?? formsDependencies();
  const at = (options.now ?? new Date()).toISOString();
  const key = await deps.keys().key({ create: true, now: options.now });
  if (!key) throw new Error('match index key unavailable');
  const store = deps.store();
  let indexed = 0;
  await inBatches(patients, async (patient) => {
    const blocking = blockingKeys(key, patient.name?.given, patient.name?.family, patient.birthDate);
    const mrn = mrnIndexKey(key, patient.mrn);
    const keys = mrn ? [...blocking, mrn] : blocking;
    const previous = await store.getMatchIndexManifest(patient.patientId);
    const current = new Set(keys);
    for (const k of keys) await store.putMatchIndexEntry(k, patient.patientId, at);
    for (const k of previous) if (!current.has(k)) await store.deleteMatchIndexEntry(k, patient.patientId);
    const unchanged = previous.length === keys.length && previous.every((k) => current.has(k));
    if (!unchanged) await store.putMatchIndexManifest(patient.patientId, keys, at);
    if (blocking.length > 0) indexed++;
  });
  return indexed;
}
