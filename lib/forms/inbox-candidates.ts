/**
 * The chart side of a packet review: for a packet in the inbox, the chart demographics (name,
 * birth date, sex, MRN, address, email, phone) of every candidate the matcher recorded and of the patient the
 * sender named, if any, so a reviewer can compare them with what the form tool sent. Read by
 * staff only (scope interop:inbox:read); every patient shown is named in the audit trail.
 */
import type { Address, Patient, PersonName } from '../chart/types';
import type { FormsDependencies, StorePart } from './forms-dependencies';
import type { PacketReader } from './packet-reader';
import { inboxPacket } from './inbox';

export interface CandidateChart {
  patientId: string;
  /**
   * why the patient is shown: a matcher candidate, the patient the sender named, a reviewer's chart
   * search, or the patient the packet was routed to (so a reviewer who lost a race sees whose chart it went to)
   */
  role: 'candidate' | 'requested' | 'search' | 'routed';
  score?: number;
  name: PersonName;
  birthDate?: string;
  sex?: Patient['sex'];
  mrn: string;
  assigningAuthority: string;
  address?: Address;
  email?: string;
  phone?: string;
}

/** At most this many charts are read for one packet (the matcher records at most 10 candidates). */
export const MAX_CANDIDATE_CHARTS = 11;

/** The charts of a packet's candidates; InboxPacketNotFoundError like getInboxPacket. */
export async function inboxCandidateCharts(
  deps: Pick<FormsDependencies, 'patients'> & StorePart<Pick<PacketReader, 'getPacket'>>,
  packetId: string,
): Promise<CandidateChart[]> {
  // the full item: candidates are outside the no-content projection (the content stays encrypted, unread)
  const packet = await inboxPacket(deps.store(), packetId);
  const wanted = new Map<string, { role: CandidateChart['role']; score?: number }>();
  // a packet routed by a reviewer: its chart patient first, whether or not the matcher proposed them
  if (packet.state === 'routed_manually' && packet.patientId) wanted.set(packet.patientId, { role: 'routed' });
  if (packet.requestedPatientId && !wanted.has(packet.requestedPatientId)) wanted.set(packet.requestedPatientId, { role: 'requested' });
  for (const candidate of packet.candidates ?? []) {
    if (!wanted.has(candidate.patientId)) wanted.set(candidate.patientId, { role: 'candidate', score: candidate.score });
  }
  const entries = [...wanted.entries()].slice(0, MAX_CANDIDATE_CHARTS);
  const patients = await Promise.all(entries.map(([patientId]) => deps.patients().getPatient(patientId)));
  const charts: CandidateChart[] = [];
  entries.forEach(([, why], i) => {
    const patient = patients[i];
    // a candidate deleted from the chart since matching is simply not shown
    if (!patient) return;
    charts.push(chartOf(patient, why));
  });
  return charts;
}

/** The demographics a reviewer compares: name, birth date, sex, MRN and authority, address, email, phone. */
export function chartOf(patient: Patient, why: { role: CandidateChart['role']; score?: number }): CandidateChart {
  return {
    patientId: patient.patientId,
    role: why.role,
    ...(why.score !== undefined ? { score: why.score } : {}),
    name: patient.name,
    ...(patient.birthDate ? { birthDate: patient.birthDate } : {}),
    ...(patient.sex ? { sex: patient.sex } : {}),
    mrn: patient.mrn,
    assigningAuthority: patient.assigningAuthority,
    ...(patient.address ? { address: patient.address } : {}),
    ...(patient.email ? { email: patient.email } : {}),
    ...(patient.phone ? { phone: patient.phone } : {}),
  };
}
