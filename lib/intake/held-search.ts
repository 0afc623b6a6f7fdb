/**
 * The chart search a reviewer runs from a held record: the packet view's search
 * (lib/forms/patient-search.ts searchChart), tied to a held record instead of a packet.
 */
import { searchChart, type PatientSearchDependencies, type PatientSearchQuery, type PatientSearchResult } from '../forms/patient-search';
import { HeldRecordNotFoundError } from './held-review';
import { isHeldId, type HeldRecordStore } from './held-records';

/** Chart patients for a held record's reviewer; HeldRecordNotFoundError for an unknown held id. */
export async function searchChartForHeld(
  deps: PatientSearchDependencies & { held: Pick<HeldRecordStore, 'get'> },
  heldId: string,
  query: PatientSearchQuery,
): Promise<PatientSearchResult> {
  if (!isHeldId(heldId) || !(await deps.held.get(heldId))) throw new HeldRecordNotFoundError();
  return searchChart(deps, query);
}
