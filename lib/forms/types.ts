/**
 * Form packets as the intake, the matcher, the sweeper and the inbox see them.
 * See docs/forms.md for the states and transitions and the storage layout.
 */

/**
 * Where a packet is:
 * - `routed`          stored under the patient the partner named (intake, final)
 * - `pending_match`   in the inbox, queued for the matcher
 * - `pending_review`  in the inbox, waiting for staff (matcher undecided, or the named patient unknown)
 * - `matched`         routed to a patient by the matcher (final)
 * - `routed_manually` routed to a patient by staff through the inbox API (final)
 */
export type PacketState = 'routed' | 'pending_match' | 'pending_review' | 'matched' | 'routed_manually';

export const PACKET_STATES: readonly PacketState[] = ['routed', 'pending_match', 'pending_review', 'matched', 'routed_manually'];
/** States in which a packet is in the interop inbox (not yet under a patient). */
export const INBOX_STATES: readonly PacketState[] = ['pending_match', 'pending_review'];
/** States in which a packet is under a patient; none of them can change again. */
export const ROUTED_STATES: readonly PacketState[] = ['routed', 'matched', 'routed_manually'];

/**
 * Why a packet is in its state (machine codes only, never free text):
 * pending_review: unknown_patient_id | no_candidates | ambiguous | below_threshold | missing_dob |
 *                 matching_failed | matching_error | link_conflict | demographics_mismatch
 * matched:        known_link | score
 */
export const PACKET_REASONS = [
  'unknown_patient_id',
  'no_candidates',
  'ambiguous',
  'below_threshold',
  'missing_dob',
  'matching_failed',
  'matching_error',
  'link_conflict',
  'demographics_mismatch',
  'no_relationship',
  'known_link',
  'score',
] as const;
export type PacketReason = (typeof PACKET_REASONS)[number];

/** Who changed a packet: an API key (partner or staff), the matcher or the sweeper. */
export type Actor = { type: 'api-key'; keyId: string; partnerId: string } | { type: 'matcher' } | { type: 'sweeper' };

export type HistoryAction = 'received' | 'matched' | 'held_for_review' | 'requeued' | 'routed_manually' | 'assessed';

/** One entry of a packet's history: every state change (and every re-queue) with time and actor. */
export interface HistoryEntry {
  at: string;
  action: HistoryAction;
  /** the state after the action */
  state: PacketState;
  /** the state before the action (absent for `received`) */
  from?: PacketState;
  actor: 'api-key' | 'staff' | 'matcher' | 'sweeper';
  keyId?: string;
  /** sign-in name of the staff member who acted (actor staff) */
  staffUsername?: string;
  partnerId?: string;
  reason?: PacketReason;
  patientId?: string;
}

/** A chart patient the matcher considered, with its score and the rules that produced it. */
export interface CandidateRecord {
  patientId: string;
  score: number;
  /** e.g. ["last_name_dob", "first_name_exact:+50", "email_mismatch:-30"] */
  reasons: string[];
}

/** The patient as the form tool described them (PHI: stored only inside the encrypted content). */
export interface FormPatient {
  externalPatientId?: string;
  firstName: string;
  lastName: string;
  /** YYYY-MM-DD */
  dob?: string;
  email?: string;
}

export type AnswerValue = string | number | boolean | null | Array<string | number | boolean | null>;

/** The validated body of POST /receiveFormIntakeScope. */
export interface FormIntakeBody {
  payload: {
    sourceSystemId: string;
    formId: string;
    formName?: string;
    submissionId: string;
    patientId?: string;
    patient: FormPatient & { patientId?: string };
    answers: Record<string, AnswerValue>;
  };
}

/** What is encrypted (envelope, purpose form-packet): everything that may be PHI. */
export interface PacketContent {
  formName?: string;
  patient: FormPatient;
  answers: Record<string, AnswerValue>;
}

/** The plain (non-PHI) attributes of a stored packet. */
export interface PacketRecord {
  packetId: string;
  sourceSystemId: string;
  formId: string;
  submissionId: string;
  partnerId: string;
  keyId: string;
  state: PacketState;
  reason?: PacketReason;
  /** the patient the packet is under (routed, matched, routed_manually) */
  patientId?: string;
  /** the patient id the partner named when it was not found */
  requestedPatientId?: string;
  receivedAt: string;
  stateChangedAt: string;
  /** GSI byStateSummary (and the retiring byState) keys */
  statePk: string;
  stateSk: string;
  candidates?: CandidateRecord[];
  /** HMAC of (sourceSystemId, externalPatientId), set by the matcher; lets staff routing remember the link */
  linkKey?: string;
  queueAttempts: number;
  lastQueuedAt?: string;
  /** when the matcher recorded candidates on a packet that was held for review at intake */
  assessedAt?: string;
  /** when the audit record of the matcher's routing was written */
  routingAuditedAt?: string;
  /** SHA-256 of the canonical submitted content (a changed resubmission is a 409) */
  contentHash?: string;
  history: HistoryEntry[];
  /** serialized envelope of PacketContent */
  content: string;
  contentBytes: number;
}

/** The summary the inbox list shows (no PHI, no decryption). */
export interface PacketSummary {
  packetId: string;
  state: PacketState;
  reason?: PacketReason;
  sourceSystemId: string;
  formId: string;
  receivedAt: string;
  stateChangedAt: string;
  requestedPatientId?: string;
  candidateCount: number;
  topCandidateScore?: number;
}
