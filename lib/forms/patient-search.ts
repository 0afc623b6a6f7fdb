/**
 * The chart search a reviewer runs from a packet in the inbox, when the patient is not among the
 * matcher's candidates: by MRN, or by last name + birth date (first name optional). It reads the
 * match index (match-index.ts: no name, birth date or MRN in any key), then the chart, and keeps
 * only exact hits:
 *   - MRN: the chart MRN equals the one typed (trimmed, case-insensitive), any assigning authority;
 *   - name + birth date: the same birth date and the same last name (match-index normalisation:
 *     diacritics, case, spaces, hyphens and apostrophes do not count); a first name, when given,
 *     must equal the chart's first given-name token.
 * No fuzzy search here: the matcher already tried that. At most {@link MAX_SEARCH_RESULTS}
 * patients are answered (the caller is told when there were more), each shown as the candidates
 * are (inbox-candidates.ts), and each named in the audit trail by the endpoint.
 */
import type { FormsDependencies, StorePart } from './forms-dependencies';
import type { PacketReader } from './packet-reader';
import { type CandidateChart, chartOf } from './inbox-candidates';
import { blockingKeys, mrnIndexKey } from './match-keys';
import { nameTokens, normaliseIdentifier, normaliseName } from './normalize';
import { inboxPacket } from './inbox';

export const MAX_SEARCH_RESULTS = 20;

export type PatientSearchQuery = { mrn: string } | { lastName: string; birthDate: string; firstName?: string };

/** What the chart search reads: the match index key, the index, the chart (and the packet, from a packet). */
export type PatientSearchDependencies = Pick<FormsDependencies, 'patients' | 'keys'> & StorePart<Pick<PacketReader, 'getPacket' | 'queryMatchIndex'>>;

export interface PatientSearchResult {
  charts: CandidateChart[];
  /** more patients fit than were answered: the reviewer should narrow the search */
  more: boolean;
}

/** Chart patients for a packet's reviewer; InboxPacketNotFoundError like the candidates read. */
export async function searchChartForPacket(deps: PatientSearchDependencies, packetId: string, query: PatientSearchQuery): Promise<PatientSearchResult> {
  await inboxPacket(deps.store(), packetId, { withContent: false });
  return searchChart(deps, query);
}

/**
 * The chart search of a reviewer (from a packet, or from a held record of HL7 intake): the match
 * index by MRN or by last name + birth date, exact hits only, at most MAX_SEARCH_RESULTS.
 */
export async function searchChart(deps: PatientSearchDependencies, query: PatientSearchQuery): Promise<PatientSearchResult> {
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
    // a stale index entry (a patient renamed or removed since) is not a hit
    if (!patient || !fits(patient, query)) continue;
    if (charts.length === MAX_SEARCH_RESULTS) {
      more = true;
      break;
    }
    charts.push(chartOf(patient, { role: 'search' }));
  }
  return { charts, more };
}

function fits(patient: { mrn: string; birthDate?: string; name: { family?: string; given?: string } }, query: PatientSearchQuery): boolean {
  if ('mrn' in query) return normaliseIdentifier(patient.mrn) === normaliseIdentifier(query.mrn);
  if (patient.birthDate !== query.birthDate) return false;
  if (normaliseName(patient.name.family) !== normaliseName(query.lastName)) return false;
  const first = nameTokens(query.firstName)[0];
  return !first || nameTokens(patient.name.given)[0] === first;
}
