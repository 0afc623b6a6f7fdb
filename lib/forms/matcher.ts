/**
 * Patient matching rules: pure, deterministic and explainable. No I/O here; lib/forms/matching.ts
 * finds the candidates (known link, match index) and applies the decision.
 *
 * A chart patient is a CANDIDATE when its normalised last name and date of birth equal the
 * packet's (or, for swapped names, its last name equals the packet's first name and its first
 * name matches the packet's last name). Each candidate is scored:
 *
 *   rule                       points   when
 *   first_name_exact             +50    normalised first names (or their first tokens) are equal
 *   first_name_nickname          +40    the first names share a group of the nickname table
 *   first_name_transposition     +40    equal but for two adjacent letters swapped ("Robni")
 *   first_name_typo              +25    one letter inserted, deleted or changed (both >= 4 letters)
 *   first_name_initial           +15    one side is an initial equal to the other's first letter
 *   names_swapped                +40    first and last name swapped, otherwise exact or nickname
 *   email_exact                  +30    both have an email and they are equal (case-insensitive)
 *   email_mismatch               -30    both have an email and they differ
 *   external_id_mrn              +40    the form tool's externalPatientId equals the chart MRN
 *
 * Decision: the packet is routed when EXACTLY ONE candidate scores at or above MATCH_THRESHOLD
 * (50). No candidate -> no_candidates; candidates but none at the threshold -> below_threshold;
 * two or more at the threshold -> ambiguous. Those three wait for review with the candidates and
 * their scores recorded. So an exact first name + last name + date of birth routes on its own,
 * a nickname or a typo needs a second piece of evidence (email or MRN), and a differing email
 * sends even an exact name to review.
 */
import type { Patient } from '../chart/types';
import { areNicknames } from './nicknames';
import { nameTokens, normaliseEmail, normaliseIdentifier, normaliseName } from './normalize';
import type { CandidateRecord } from './types';

export const MATCH_THRESHOLD = 50;
/** At most this many candidates are recorded on a packet (highest scores first). */
export const MAX_RECORDED_CANDIDATES = 10;

export const MATCH_POINTS = {
  firstNameExact: 50,
  firstNameNickname: 40,
  firstNameTransposition: 40,
  firstNameTypo: 25,
  firstNameInitial: 15,
  namesSwapped: 40,
  emailExact: 30,
  emailMismatch: -30,
  externalIdMrn: 40,
} as const;

/** What the packet says about the patient (decrypted, in memory only). */
export interface MatchSubject {
  firstName: string;
  lastName: string;
  dob?: string;
  email?: string;
  externalPatientId?: string;
}

/** What the chart says about a candidate. */
export interface ChartCandidate {
  patientId: string;
  given?: string;
  family: string;
  birthDate?: string;
  email?: string;
  mrn?: string;
}

export function candidateFromPatient(patient: Patient): ChartCandidate {
  return {
    patientId: patient.patientId,
    given: patient.name?.given,
    family: patient.name?.family ?? '',
    birthDate: patient.birthDate,
    email: patient.email,
    mrn: patient.mrn,
  };
}

export interface RuleResult {
  rule: string;
  points: number;
}

/** True when `a` and `b` have equal length and differ only by one swap of adjacent letters. */
export function isAdjacentTransposition(a: string, b: string): boolean {
  if (a.length !== b.length || a.length < 2 || a === b) return false;
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  if (i >= a.length - 1) return false;
  return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2);
}

/** True when `a` and `b` differ by exactly one inserted, deleted or substituted letter. */
export function isOneEditApart(a: string, b: string): boolean {
  if (a === b) return false;
  if (Math.abs(a.length - b.length) > 1) return false;
  const [short, long] = a.length <= b.length ? [a, b] : [b, a];
  let i = 0;
  while (i < short.length && short[i] === long[i]) i++;
  if (short.length === long.length) return short.slice(i + 1) === long.slice(i + 1);
  return short.slice(i) === long.slice(i + 1);
}

/** How well two first names agree, as one named rule with its points. */
export function compareFirstNames(packetName: string | undefined, chartName: string | undefined): RuleResult {
  const a = normaliseName(packetName);
  const b = normaliseName(chartName);
  if (!a || !b) return { rule: 'first_name_missing', points: 0 };
  const ta = nameTokens(packetName)[0] ?? a;
  const tb = nameTokens(chartName)[0] ?? b;
  if (a === b || ta === tb) return { rule: 'first_name_exact', points: MATCH_POINTS.firstNameExact };
  if (areNicknames(a, b) || areNicknames(ta, tb)) return { rule: 'first_name_nickname', points: MATCH_POINTS.firstNameNickname };
  if (isAdjacentTransposition(a, b) || isAdjacentTransposition(ta, tb)) return { rule: 'first_name_transposition', points: MATCH_POINTS.firstNameTransposition };
  if (Math.min(a.length, b.length) >= 4 && (isOneEditApart(a, b) || isOneEditApart(ta, tb))) return { rule: 'first_name_typo', points: MATCH_POINTS.firstNameTypo };
  if ((ta.length === 1 || tb.length === 1) && ta[0] === tb[0]) return { rule: 'first_name_initial', points: MATCH_POINTS.firstNameInitial };
  return { rule: 'first_name_mismatch', points: 0 };
}

function format(rule: RuleResult): string {
  return `${rule.rule}:${rule.points >= 0 ? '+' : ''}${rule.points}`;
}

/**
 * The candidate's score against the packet, or undefined when the chart patient is not a
 * candidate at all (last name + date of birth differ in both orientations, or no date of birth).
 */
export function scoreCandidate(subject: MatchSubject, candidate: ChartCandidate): CandidateRecord | undefined {
  if (!subject.dob || !candidate.birthDate || subject.dob !== candidate.birthDate) return undefined;
  const packetLast = normaliseName(subject.lastName);
  const packetFirst = normaliseName(subject.firstName);
  const chartFamily = normaliseName(candidate.family);
  if (!chartFamily) return undefined;

  const rules: RuleResult[] = [];
  const reasons: string[] = [];
  if (packetLast === chartFamily) {
    reasons.push('last_name_dob');
    rules.push(compareFirstNames(subject.firstName, candidate.given));
  } else if (packetFirst === chartFamily) {
    // first and last name swapped on the form: the packet's last name must match the chart's first name
    const other = compareFirstNames(subject.lastName, candidate.given);
    if (other.rule !== 'first_name_exact' && other.rule !== 'first_name_nickname') return undefined;
    reasons.push('swapped_name_dob');
    rules.push({ rule: 'names_swapped', points: MATCH_POINTS.namesSwapped });
  } else {
    return undefined;
  }

  const packetEmail = normaliseEmail(subject.email);
  const chartEmail = normaliseEmail(candidate.email);
  if (packetEmail && chartEmail) {
    rules.push(packetEmail === chartEmail ? { rule: 'email_exact', points: MATCH_POINTS.emailExact } : { rule: 'email_mismatch', points: MATCH_POINTS.emailMismatch });
  }
  const externalId = normaliseIdentifier(subject.externalPatientId);
  if (externalId && externalId === normaliseIdentifier(candidate.mrn)) rules.push({ rule: 'external_id_mrn', points: MATCH_POINTS.externalIdMrn });

  let score = 0;
  for (const rule of rules) {
    score += rule.points;
    reasons.push(format(rule));
  }
  return { patientId: candidate.patientId, score, reasons };
}

export type MatchDecision =
  | { outcome: 'matched'; patientId: string; candidates: CandidateRecord[] }
  | { outcome: 'review'; reason: 'no_candidates' | 'ambiguous' | 'below_threshold'; candidates: CandidateRecord[] };

/** Highest score first, then patient id: the same inputs always give the same order. */
export function rankCandidates(candidates: readonly CandidateRecord[]): CandidateRecord[] {
  const byPatient = new Map<string, CandidateRecord>();
  for (const c of candidates) {
    const seen = byPatient.get(c.patientId);
    if (!seen || c.score > seen.score) byPatient.set(c.patientId, c);
  }
  return [...byPatient.values()].sort((x, y) => y.score - x.score || (x.patientId < y.patientId ? -1 : x.patientId > y.patientId ? 1 : 0));
}

/** The decision rule: exactly one candidate at or above the threshold routes the packet. */
export function decideMatch(scored: readonly CandidateRecord[], threshold = MATCH_THRESHOLD): MatchDecision {
  const ranked = rankCandidates(scored);
  const recorded = ranked.slice(0, MAX_RECORDED_CANDIDATES);
  if (ranked.length === 0) return { outcome: 'review', reason: 'no_candidates', candidates: [] };
  const over = ranked.filter((c) => c.score >= threshold);
  if (over.length === 1) return { outcome: 'matched', patientId: over[0]!.patientId, candidates: recorded };
  return { outcome: 'review', reason: over.length === 0 ? 'below_threshold' : 'ambiguous', candidates: recorded };
}

/** Scores every chart patient against the packet and decides. */
export function matchSubject(subject: MatchSubject, patients: readonly ChartCandidate[], threshold = MATCH_THRESHOLD): MatchDecision {
  const scored: CandidateRecord[] = [];
  for (const p of patients) {
    const s = scoreCandidate(subject, p);
    if (s) scored.push(s);
  }
  return decideMatch(scored, threshold);
}
