/**
 * The chart search a reviewer runs from a held record (the packet view's search, tied to a held record
 * instead of a packet): by MRN, or by last name + birth date (first name optional), through the match
 * index, exact hits only, at most MAX_SEARCH_RESULTS, each shown as the inbox shows chart patients.
 * The rule of a hit is the packet search's (lib/forms/patient-search.ts), repeated here because that
 * module ties the search to a packet.
 */
import { MAX_SEARCH_RESULTS, type PatientSearchQuery, type PatientSearchResult } from '../forms/patient-search';
import type { FormsDependencies } from '../forms/forms-dependencies';
import { chartOf, type CandidateChart } from '../forms/inbox-candidates';
import { blockingKeys, mrnIndexKey } from '../forms/match-keys';
import { nameTokens, normaliseIdentifier, normaliseName } from '../forms/normalize';
import type { Patient } from '../chart/types';
import { HeldRecordNotFoundError } from './held-review';
import { isHeldId, type HeldRecordStore } from './held-records';

/** Chart patients for a held record's reviewer; HeldRecordNotFoundError for an unknown held id. */
export async function searchChartForHeld(
  deps: Pick<FormsDependencies, 'store' | 'patients' | 'keys'> & { held: Pick<HeldRecordStore, 'get'> },
  heldId: string,
  query: PatientSearchQuery,
): Promise<PatientSearchResult> {
  if (!isHeldId(heldId) || !(await deps.held.get(heldId))) throw new HeldRecordNotFoundError();
  const key = await deps.keys().key({ create: false });
  // no key yet: nothing was ever indexed, so nobody can be found
  if (!key) return { charts: [], more: false };
  const indexKey = 'mrn' in query ? mrnIndexKey(key, query.mrn) : blockingKeys(key, undefined, query.lastName, query.birthDate)[0];
  if (!indexKey) return { charts: [], more: false };
  const ids = [...new Set(await deps.store().queryMatchIndex(indexKey))].sort();
  const charts: CandidateChart[] = [];
  let more = false;
  for (const patientId of ids) {
    const patient = await deps.patients().getPatient(patientId);
    if (!patient || !fits(patient, query)) continue;
    if (charts.length === MAX_SEARCH_RESULTS) {
      more = true;
      break;
    }
    charts.push(chartOf(patient, { role: 'search' }));
  }
  return { charts, more };
}

function fits(patient: Pick<Patient, 'mrn' | 'birthDate' | 'name'>, query: PatientSearchQuery): boolean {
  if ('mrn' in query) return normaliseIdentifier(patient.mrn) === normaliseIdentifier(query.mrn);
  if (patient.birthDate !== query.birthDate) return false;
  if (normaliseName(patient.name.family) !== normaliseName(query.lastName)) return false;
  const first = nameTokens(query.firstName)[0];
  return !first || nameTokens(patient.name.given)[0] === first;
}
