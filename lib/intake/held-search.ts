/**
 * The chart search a reviewer runs from a held record: the packet view's search
 * (lib/forms/patient-search.ts searchChart), tied to a held record instead of a packet.
 */
import { searchChart, type PatientSearchQuery, type PatientSearchResult } from '../forms/patient-search';
import type { FormsDependencies } from '../forms/forms-dependencies';
import { HeldRecordNotFoundError } from './held-review';
import { isHeldId, type HeldRecordStore } from './held-records';

/** Chart patients for a held record's reviewer; HeldRecordNotFoundError for an unknown held id. */
export async function searchChartForHeld(
  deps: Pick<FormsDependencies, 'store' | 'patients' | 'keys'> & { held: Pick<HeldRecordStore, 'get'> },
  heldId: string,
  query: PatientSearchQuery,
): Promise<PatientSearchResult> {
  if (!isHeldId(heldId) || !(await deps.held.get(heldId))) throw new HeldRecordNotFoundError();
  return searchChart(deps, query);
}
