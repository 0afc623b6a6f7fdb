/**
 * Patient matching rules: pure, deterministic and explainable. No I/O here; lib/forms/matching.ts
 * finds the candidates (known link, the blocking keys of the match index) and applies the decision.
 *
 * Score: Fellegi-Sunter. Each field is compared at one agreement level; the level adds its weight
 * log2(m / u), where m = P(level | same person) and u = P(level | different people who share the
 * block, i.e. the date of birth). The weights, their m and u and why are in MATCH_WEIGHTS below and
 * in docs/forms.md. A candidate's score is the sum of its fields' weights; every term is recorded
 * as a reason ("first_name_nickname:+4.7").
 *
 * Decision: the best candidate is routed only when
 *   1. its score is at least MATCH_THRESHOLD, and
 *   2. it beats the runner-up by at least MATCH_MARGIN (2^6 = 64 times more likely), and
 *   3. when another chart patient shares its last name and birth date (twins, namesakes), the
 *      best candidate is corroborated by more than its name: an equal email or an MRN.
 * Otherwise the packet waits for review: no_candidates, below_threshold (best under the
 * threshold) or ambiguous (margin not met, or a twin/namesake without corroboration).
 */
import type { Patient } from '../chart/types';
import { areNicknames } from './nicknames';
import { nameTokens, normaliseEmail, normaliseIdentifier, normaliseName, phoneticCodes } from './normalize';
import type { CandidateRecord } from './types';

/** A (m, u) pair: probability of the agreement level among true matches and among non-matches. */
export interface LevelProbabilities {
  m: number;
  u: number;
}

/**
 * The agreement levels per field, with m and u. u is conditional on the block: candidates already
 * share the date of birth, so u is "how often two different people born on the same day agree
 * this way on this field".
 */
export const MATCH_PROBABILITIES = {
  dob: { exact: { m: 0.97, u: 0.00004 } },
  firstName: {
    exact: { m: 0.88, u: 0.004 },
    nickname: { m: 0.04, u: 0.0015 },
    edit1: { m: 0.03, u: 0.002 },
    phonetic: { m: 0.02, u: 0.003 },
    initial: { m: 0.01, u: 0.05 },
    disagree: { m: 0.02, u: 0.94 },
  },
  lastName: {
    exact: { m: 0.9, u: 0.002 },
    token: { m: 0.02, u: 0.001 },
    edit1: { m: 0.03, u: 0.001 },
    phonetic: { m: 0.03, u: 0.002 },
    disagree: { m: 0.02, u: 0.995 },
  },
  /** first and last name written in each other's place (applied on top of the crosswise comparison) */
  namesSwapped: { m: 0.02, u: 0.08 },
  email: { agree: { m: 0.85, u: 0.0001 }, disagree: { m: 0.15, u: 0.9999 } },
  externalIdMrn: { agree: { m: 0.9, u: 0.00001 } },
} as const;

/** log2(m/u), rounded to one decimal: what each level adds to the score. */
export function weightOf(level: LevelProbabilities): number {
  return Math.round(Math.log2(level.m / level.u) * 10) / 10;
}

type Weights<T> = { [K in keyof T]: T[K] extends LevelProbabilities ? number : Weights<T[K]> };

function weightsOf<T extends object>(table: T): Weights<T> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(table)) out[k] = 'm' in (v as object) ? weightOf(v as LevelProbabilities) : weightsOf(v as object);
  return out as Weights<T>;
}

/** Pure (no side effect): a bundle that never scores candidates (form intake) drops the table. */
export const MATCH_WEIGHTS = /* @__PURE__ */ weightsOf(MATCH_PROBABILITIES);

/** Exact first + last name + date of birth scores 31.2; a nickname 28.1; a last-name typo 28.2. */
export const MATCH_THRESHOLD = 24;
/** The best candidate must beat the runner-up by this much (log2 units: 64 times more likely). */
export const MATCH_MARGIN = 6;
/** At most this many candidates are recorded on a packet (highest scores first). */
export const MAX_RECORDED_CANDIDATES = 10;

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

export type FirstNameLevel = keyof typeof MATCH_PROBABILITIES.firstName | 'missing';
export type LastNameLevel = keyof typeof MATCH_PROBABILITIES.lastName;

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

/** One typo apart: a transposition (3+ letters) or one edit (both 4+ letters; shorter names are too easily one edit apart). */
function isTypo(a: string, b: string): boolean {
  if (Math.min(a.length, b.length) >= 3 && isAdjacentTransposition(a, b)) return true;
  return Math.min(a.length, b.length) >= 4 && isOneEditApart(a, b);
}

function sharePhonetic(a: string | undefined, b: string | undefined): boolean {
  const codes = new Set(phoneticCodes(a));
  return phoneticCodes(b).some((c) => c.length >= 2 && codes.has(c));
}

/** How well two first names agree (the best level that holds). */
export function compareFirstNames(packetName: string | undefined, chartName: string | undefined): FirstNameLevel {
  const a = normaliseName(packetName);
  const b = normaliseName(chartName);
  if (!a || !b) return 'missing';
  const ta = nameTokens(packetName)[0] ?? a;
  const tb = nameTokens(chartName)[0] ?? b;
  if (a === b || ta === tb) return 'exact';
  if (areNicknames(a, b) || areNicknames(ta, tb)) return 'nickname';
  if (isTypo(a, b) || isTypo(ta, tb)) return 'edit1';
  if (sharePhonetic(ta, tb)) return 'phonetic';
  if ((ta.length === 1 || tb.length === 1) && ta[0] === tb[0]) return 'initial';
  return 'disagree';
}

/** How well two last names agree: exact, a shared token of a double-barrelled name, one typo, the same sound. */
export function compareLastNames(packetName: string | undefined, chartName: string | undefined): LastNameLevel {
  const a = normaliseName(packetName);
  const b = normaliseName(chartName);
  if (!a || !b) return 'disagree';
  if (a === b) return 'exact';
  const tokensA = nameTokens(packetName).filter((t) => t.length >= 2);
  const tokensB = new Set(nameTokens(chartName).filter((t) => t.length >= 2));
  if ((tokensA.length > 1 || tokensB.size > 1) && tokensA.some((t) => tokensB.has(t))) return 'token';
  if (isTypo(a, b)) return 'edit1';
  if (sharePhonetic(a, b)) return 'phonetic';
  return 'disagree';
}

/** A scored candidate with what the decision needs besides the score. */
export interface ScoredCandidate extends CandidateRecord {
  /** normalised last name + date of birth of the chart patient: equal blocks are twins or namesakes */
  block: string;
  /** the score rests on more than the name and birth date (equal email, or MRN) */
  corroborated: boolean;
}

function term(rule: string, points: number): string {
  return `${rule}:${points >= 0 ? '+' : ''}${points.toFixed(1)}`;
}

interface NameScore {
  points: number;
  reasons: string[];
}

function nameScore(first: FirstNameLevel, last: LastNameLevel, swapped: boolean): NameScore {
  const reasons: string[] = [];
  let points = 0;
  if (first !== 'missing') {
    const w = MATCH_WEIGHTS.firstName[first];
    points += w;
    reasons.push(term(`first_name_${first}`, w));
  }
  const lw = MATCH_WEIGHTS.lastName[last];
  points += lw;
  reasons.push(term(`last_name_${last}`, lw));
  if (swapped) {
    points += MATCH_WEIGHTS.namesSwapped;
    reasons.push(term('names_swapped', MATCH_WEIGHTS.namesSwapped));
  }
  return { points, reasons };
}

/**
 * The candidate's score against the packet, or undefined when the chart patient cannot be a
 * candidate at all (no date of birth on either side, or different dates: every block includes it).
 */
export function scoreCandidate(subject: MatchSubject, candidate: ChartCandidate): ScoredCandidate | undefined {
  if (!subject.dob || !candidate.birthDate || subject.dob !== candidate.birthDate) return undefined;
  const family = normaliseName(candidate.family);
  if (!family) return undefined;

  const straight = nameScore(compareFirstNames(subject.firstName, candidate.given), compareLastNames(subject.lastName, candidate.family), false);
  const crosswise = nameScore(compareFirstNames(subject.lastName, candidate.given), compareLastNames(subject.firstName, candidate.family), true);
  const names = crosswise.points > straight.points ? crosswise : straight;

  const dob = MATCH_WEIGHTS.dob.exact;
  let score = dob + names.points;
  const reasons = [term('dob_exact', dob), ...names.reasons];
  let corroborated = false;

  const packetEmail = normaliseEmail(subject.email);
  const chartEmail = normaliseEmail(candidate.email);
  if (packetEmail && chartEmail) {
    const agree = packetEmail === chartEmail;
    const w = agree ? MATCH_WEIGHTS.email.agree : MATCH_WEIGHTS.email.disagree;
    score += w;
    reasons.push(term(agree ? 'email_exact' : 'email_mismatch', w));
    corroborated ||= agree;
  }
  const externalId = normaliseIdentifier(subject.externalPatientId);
  if (externalId && externalId === normaliseIdentifier(candidate.mrn)) {
    score += MATCH_WEIGHTS.externalIdMrn.agree;
    reasons.push(term('external_id_mrn', MATCH_WEIGHTS.externalIdMrn.agree));
    corroborated = true;
  }
  return { patientId: candidate.patientId, score: Math.round(score * 10) / 10, reasons, block: `${family}|${candidate.birthDate}`, corroborated };
}

export type ReviewReason = 'no_candidates' | 'ambiguous' | 'below_threshold';

export type MatchDecision =
  { outcome: 'matched'; patientId: string; candidates: CandidateRecord[] } | { outcome: 'review'; reason: ReviewReason; candidates: CandidateRecord[] };

/** Highest score first, then patient id: the same inputs always give the same order. */
export function rankCandidates<T extends CandidateRecord>(candidates: readonly T[]): T[] {
  const byPatient = new Map<string, T>();
  for (const c of candidates) {
    const seen = byPatient.get(c.patientId);
    if (!seen || c.score > seen.score) byPatient.set(c.patientId, c);
  }
  return [...byPatient.values()].sort((x, y) => y.score - x.score || (x.patientId < y.patientId ? -1 : x.patientId > y.patientId ? 1 : 0));
}

function recorded(c: ScoredCandidate, extra: string[] = []): CandidateRecord {
  return { patientId: c.patientId, score: c.score, reasons: [...c.reasons, ...extra] };
}

/** The decision rule: threshold, margin over the runner-up, and corroboration for twins and namesakes. */
export function decideMatch(scored: readonly ScoredCandidate[], threshold = MATCH_THRESHOLD, margin = MATCH_MARGIN): MatchDecision {
  const ranked = rankCandidates(scored);
  if (ranked.length === 0) return { outcome: 'review', reason: 'no_candidates', candidates: [] };
  const best = ranked[0]!;
  const runnerUp = ranked[1];
  const siblings = ranked.filter((c) => c.patientId !== best.patientId && c.block === best.block);
  const notes: string[] = [];
  if (runnerUp) notes.push(term('margin_over_runner_up', best.score - runnerUp.score));
  if (siblings.length > 0) notes.push(`shares_last_name_and_dob_with:${siblings.length}`);
  const candidates = ranked.slice(0, MAX_RECORDED_CANDIDATES).map((c) => (c === best ? recorded(c, notes) : recorded(c)));

  if (best.score < threshold) return { outcome: 'review', reason: 'below_threshold', candidates };
  if (runnerUp && best.score - runnerUp.score < margin) return { outcome: 'review', reason: 'ambiguous', candidates };
  if (siblings.length > 0 && !best.corroborated) return { outcome: 'review', reason: 'ambiguous', candidates };
  return { outcome: 'matched', patientId: best.patientId, candidates };
}

/** Scores every chart patient against the packet and decides. */
export function matchSubject(subject: MatchSubject, patients: readonly ChartCandidate[], threshold = MATCH_THRESHOLD): MatchDecision {
  const scored: ScoredCandidate[] = [];
  for (const p of patients) {
    const s = scoreCandidate(subject, p);
    if (s) scored.push(s);
  }
  return decideMatch(scored, threshold);
}

/**
 * Whether a packet's demographics agree exactly with a chart patient (issue 26: a packet naming
 * `patientId` is routed directly only then): first name, last name and birth date are all present
 * on both sides and equal after normaliseName (diacritics folded, case, spaces, hyphens and
 * apostrophes dropped: "Zoe Odegard" agrees with "Zoë Ødegård"). No near variants, nicknames or
 * swapped names: those are for the matcher's score and a reviewer, never for a direct route.
 */
export function demographicsAgree(subject: MatchSubject, candidate: ChartCandidate): boolean {
  const first = normaliseName(subject.firstName);
  const last = normaliseName(subject.lastName);
  return (
    first !== '' &&
    first === normaliseName(candidate.given) &&
    last !== '' &&
    last === normaliseName(candidate.family) &&
    subject.dob !== undefined &&
    subject.dob !== '' &&
    subject.dob === candidate.birthDate
  );
}

/**
 * Whether a packet's demographics contradict a chart patient (issue 12: a remembered link routes
 * only when they do not): the birth date differs, or neither the last name
 * (straight or swapped) nor a near variant of it agrees. A packet without a birth date is judged on
 * the name alone.
 */
export function contradicts(subject: MatchSubject, candidate: ChartCandidate): boolean {
  if (subject.dob && candidate.birthDate && subject.dob !== candidate.birthDate) return true;
  const straight = compareLastNames(subject.lastName, candidate.family);
  const swapped = compareLastNames(subject.firstName, candidate.family);
  return straight === 'disagree' && swapped === 'disagree';
}
