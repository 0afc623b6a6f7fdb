/**
 * The matching worker's domain step for one packet (rules in matcher.ts):
 *
 * 1. read the packet; anything but pending_match (or an unassessed pending_review with an unknown
 *    patient id) means the work is done: re-delivery of a message is a no-op.
 * 2. decrypt the content.
 * 3. a link already known for (sourceSystemId, externalPatientId) routes (known_link) when the
 *    packet's birth date and last name do not contradict the linked patient; otherwise review
 *    (link_conflict).
 * 4. otherwise candidates = match index entries under every blocking key of the packet (both name
 *    orientations) plus the block of the best candidate's chart last name (its twins and
 *    namesakes); each candidate is re-read from the chart (stale index entries drop out) and
 *    scored; decideMatch (threshold, margin, corroboration) -> matched (score), the link is
 *    remembered; otherwise pending_review with the candidates and their scores.
 *    Every routing appends an audit record (patient, packet, rule).
 * 5. the state change is one conditional update (state must still be pending_match), so two
 *    workers, or a worker racing staff, cannot both move the packet.
 *
 * Errors a retry can fix (DynamoDB/KMS throttling, timeouts) are thrown: the SQS message is
 * reported as failed and comes back. A packet that cannot be decrypted goes to review
 * (matching_error) instead of cycling through the queue.
 */
import { mayFileForPatient } from '../relationships/patient-access';
import { EnvelopeDecryptError, KeyServiceError } from '../crypto/errors';
import type { FormsDependencies } from './forms-dependencies';

/** The parts the matcher uses. */
export type MatcherDependencies = Pick<FormsDependencies, 'store' | 'patients' | 'cipher' | 'keys' | 'audit' | 'relationships'>;
import { blockingKeys, linkKeyOf, packetBlockingKeys } from './match-keys';
import { candidateFromPatient, contradicts, decideMatch, scoreCandidate, type MatchSubject, type ScoredCandidate } from './matcher';
import type { CandidateRecord, HistoryEntry, PacketReason, PacketRecord } from './types';

/** Candidates read from the chart per packet, at most (each block is one name or sound + one date). */
export const MAX_CANDIDATES_READ = 50;

export type MatchOutcome = 'matched' | 'held_for_review' | 'annotated' | 'already_done' | 'not_found';

export interface MatchResult {
  outcome: MatchOutcome;
  reason?: PacketReason;
  patientId?: string;
  candidateCount?: number;
}

interface Assessment {
  decision: { outcome: 'matched'; patientId: string; reason: 'known_link' | 'score' } | { outcome: 'review'; reason: PacketReason };
  candidates: CandidateRecord[];
  linkKey?: string;
}

async function readCandidates(ids: readonly string[], subject: MatchSubject, deps: MatcherDependencies): Promise<ScoredCandidate[]> {
  const patients = deps.patients();
  const found = await Promise.all(ids.map((id) => patients.getPatient(id)));
  const scored: ScoredCandidate[] = [];
  for (const patient of found) {
    if (!patient) continue; // a stale entry of a patient no longer in the chart
    const score = scoreCandidate(subject, candidateFromPatient(patient));
    if (score) scored.push(score);
  }
  return scored;
}

async function assess(packet: PacketRecord, subject: MatchSubject, deps: MatcherDependencies): Promise<Assessment> {
  const store = deps.store();
  const patients = deps.patients();
  const key = await deps.keys().key({ create: false });
  const linkKey = key ? linkKeyOf(key, packet.partnerId, packet.sourceSystemId, subject.externalPatientId) : undefined;

  if (linkKey) {
    const link = await store.getLink(linkKey);
    const linked = link ? await patients.getPatient(link.patientId) : undefined;
    if (link && linked) {
      if (!contradicts(subject, candidateFromPatient(linked))) {
        return { decision: { outcome: 'matched', patientId: link.patientId, reason: 'known_link' }, candidates: [], linkKey };
      }
      // a remembered link never overrides a different name or birth date: both sides go to a reviewer
      const scored = scoreCandidate({ ...subject, dob: linked.birthDate }, candidateFromPatient(linked));
      const shown: CandidateRecord = {
        patientId: linked.patientId,
        score: scored?.score ?? 0,
        reasons: ['known_link_contradicted', ...(scored?.reasons ?? [])],
      };
      return { decision: { outcome: 'review', reason: 'link_conflict' }, candidates: [shown], linkKey };
    }
  }
  if (!subject.dob) return { decision: { outcome: 'review', reason: 'missing_dob' }, candidates: [], linkKey };
  if (!key) return { decision: { outcome: 'review', reason: 'no_candidates' }, candidates: [], linkKey };

  const bucketKeys = packetBlockingKeys(key, subject.firstName, subject.lastName, subject.dob);
  const ids = [...new Set((await Promise.all(bucketKeys.map((k) => store.queryMatchIndex(k)))).flat())].sort().slice(0, MAX_CANDIDATES_READ);
  const scored = await readCandidates(ids, subject, deps);

  // twins and namesakes of the best candidate must be in the comparison even when the packet's
  // spelling did not reach their block: look up the block of the best candidate's chart name
  const best = [...scored].sort((a, b) => b.score - a.score || (a.patientId < b.patientId ? -1 : 1))[0];
  if (best) {
    const chart = await patients.getPatient(best.patientId);
    const own = chart ? blockingKeys(key, undefined, chart.name?.family, chart.birthDate)[0] : undefined;
    if (own && !bucketKeys.includes(own)) {
      const seen = new Set(ids);
      const siblings = (await store.queryMatchIndex(own))
        .filter((id) => !seen.has(id))
        .sort()
        .slice(0, MAX_CANDIDATES_READ);
      scored.push(...(await readCandidates(siblings, subject, deps)));
    }
  }

  const decision = decideMatch(scored);
  if (decision.outcome === 'matched')
    return { decision: { outcome: 'matched', patientId: decision.patientId, reason: 'score' }, candidates: decision.candidates, linkKey };
  return { decision: { outcome: 'review', reason: decision.reason }, candidates: decision.candidates, linkKey };
}

/**
 * A match the partner may route to: a chart patient it has a holding relationship with. Otherwise
 * the packet goes to a reviewer (`no_relationship`) with the patient the matcher found among its
 * candidates, and no link is remembered (a link would route the partner's next packet there).
 */
async function requireRelationship(assessed: Assessment, partnerId: string, deps: Pick<MatcherDependencies, 'relationships'>, now: Date): Promise<Assessment> {
  const { decision } = assessed;
  if (decision.outcome !== 'matched' || (await mayFileForPatient(partnerId, decision.patientId, deps.relationships, now))) return assessed;
  const found = assessed.candidates.some((c) => c.patientId === decision.patientId)
    ? assessed.candidates
    : [{ patientId: decision.patientId, score: 0, reasons: [decision.reason] }, ...assessed.candidates];
  return { decision: { outcome: 'review', reason: 'no_relationship' }, candidates: found, ...(assessed.linkKey ? { linkKey: assessed.linkKey } : {}) };
}

/** The audit record of a routing by the matcher (ids and the rule only), then the packet notes it was written. */
async function auditRouting(
  packet: Pick<PacketRecord, 'packetId' | 'partnerId' | 'sourceSystemId'>,
  patientId: string,
  rule: PacketReason,
  at: string,
  deps: MatcherDependencies,
): Promise<void> {
  await deps.audit().append({
    at,
    requestId: `matcher:${packet.packetId}`,
    partnerId: packet.partnerId,
    keyId: 'matcher',
    action: 'forms.match',
    outcome: 'success',
    status: 200,
    patientId,
    resourceIds: { packetId: packet.packetId, rule },
  });
  await deps.store().markRoutingAudited(packet.packetId, at);
}

function subjectOf(content: { patient: MatchSubject }): MatchSubject {
  const p = content.patient;
  return { firstName: p.firstName, lastName: p.lastName, dob: p.dob, email: p.email, externalPatientId: p.externalPatientId };
}

/** pending_match -> pending_review for a person to decide, with the reason (and what the matcher found). */
async function holdForReview(
  store: ReturnType<MatcherDependencies['store']>,
  packet: { packetId: string; receivedAt: string },
  at: string,
  reason: PacketReason,
  found: { candidates?: CandidateRecord[]; linkKey?: string } = {},
): Promise<boolean> {
  return store.transition({
    packetId: packet.packetId,
    from: ['pending_match'],
    to: 'pending_review',
    at,
    sortTime: packet.receivedAt,
    reason,
    ...found,
    entry: { at, action: 'held_for_review', from: 'pending_match', state: 'pending_review', actor: 'matcher', reason },
  });
}

export async function matchPacket(packetId: string, deps: MatcherDependencies, now: () => Date = () => new Date()): Promise<MatchResult> {
  const store = deps.store();
  const packet = await store.getPacket(packetId);
  if (!packet) return { outcome: 'not_found' };
  if (packet.state === 'matched' && packet.patientId && !packet.routingAuditedAt) {
    // routed by an earlier delivery that failed before its audit record was written
    await auditRouting(packet, packet.patientId, packet.reason ?? 'score', now().toISOString(), deps);
    return { outcome: 'already_done' };
  }
  // held at intake (named patient unknown, or contradicted by the packet): candidates for the reviewer only
  const annotateOnly =
    packet.state === 'pending_review' && (packet.reason === 'unknown_patient_id' || packet.reason === 'demographics_mismatch') && !packet.assessedAt;
  if (packet.state !== 'pending_match' && !annotateOnly) return { outcome: 'already_done' };

  let subject: MatchSubject;
  try {
    subject = subjectOf(await deps.cipher().open(packet));
  } catch (error) {
    if (!(error instanceof EnvelopeDecryptError) && !(error instanceof KeyServiceError)) throw error;
    if (annotateOnly) return { outcome: 'already_done', reason: 'matching_error' };
    const moved = await holdForReview(store, packet, now().toISOString(), 'matching_error');
    return { outcome: moved ? 'held_for_review' : 'already_done', reason: 'matching_error' };
  }

  const { decision, candidates, linkKey } = await requireRelationship(await assess(packet, subject, deps), packet.partnerId, deps, now());
  const at = now().toISOString();

  if (annotateOnly) {
    const entry: HistoryEntry = { at, action: 'assessed', from: 'pending_review', state: 'pending_review', actor: 'matcher', reason: packet.reason };
    const done = await store.annotateForReview(packetId, at, candidates, linkKey, entry);
    return { outcome: done ? 'annotated' : 'already_done', candidateCount: candidates.length };
  }

  if (decision.outcome === 'matched') {
    if (decision.reason === 'score' && linkKey) {
      // remember before moving: a crash between the two leaves a link and a pending packet, which
      // the next delivery resolves through the link
      await store.putLink(
        linkKey,
        { patientId: decision.patientId, partnerId: packet.partnerId, sourceSystemId: packet.sourceSystemId, createdAt: at, createdBy: 'matcher', packetId },
        { onlyIfAbsent: true },
      );
    }
    const moved = await store.transition({
      packetId,
      from: ['pending_match'],
      to: 'matched',
      at,
      sortTime: packet.receivedAt,
      reason: decision.reason,
      patientId: decision.patientId,
      candidates,
      linkKey,
      entry: { at, action: 'matched', from: 'pending_match', state: 'matched', actor: 'matcher', reason: decision.reason, patientId: decision.patientId },
    });
    if (!moved) return { outcome: 'already_done' };
    await auditRouting(packet, decision.patientId, decision.reason, at, deps);
    return { outcome: 'matched', reason: decision.reason, patientId: decision.patientId, candidateCount: candidates.length };
  }

  const moved = await holdForReview(store, packet, at, decision.reason, { candidates, linkKey });
  return moved ? { outcome: 'held_for_review', reason: decision.reason, candidateCount: candidates.length } : { outcome: 'already_done' };
}
