/**
 * The interop inbox for staff (scope interop:inbox:review):
 *   listInbox        packets awaiting review (or awaiting the matcher), newest first, one GSI Query
 *                    per page, opaque cursor; summaries only (no PHI, no decryption)
 *   getInboxPacket   one packet decrypted, with its history and candidates
 *   routeInboxPacket staff routes a packet to a patient: routed_manually (conditional update, so a
 *                    packet routed meanwhile by the matcher or another reviewer answers 409)
 */
import type { FormsDependencies } from './forms-dependencies';
import { isPacketId } from './packet-id';
import { statePkFor } from './packet-store';
import type { AnswerValue, CandidateRecord, FormPatient, HistoryEntry, PacketReason, PacketRecord, PacketState, PacketSummary } from './types';
import { INBOX_STATES } from './types';

export const DEFAULT_INBOX_LIMIT = 25;
export const MAX_INBOX_LIMIT = 100;
/** States the list can show; the default is the review queue. */
export const LISTABLE_STATES: readonly PacketState[] = INBOX_STATES;
const MAX_CURSOR_LENGTH = 2048;

export class InvalidCursorError extends Error {
  override readonly name = 'InvalidCursorError';
  constructor() {
    super('cursor is not a cursor returned by this list');
  }
}

interface CursorBody {
  v: 1;
  s: PacketState;
  k: { pk: string; sk: string; statePk: string; stateSk: string };
}

export function encodeCursor(state: PacketState, lastKey: Record<string, string>): string {
  const body: CursorBody = { v: 1, s: state, k: { pk: lastKey.pk!, sk: lastKey.sk!, statePk: lastKey.statePk!, stateSk: lastKey.stateSk! } };
  return Buffer.from(JSON.stringify(body), 'utf8').toString('base64url');
}

/** The start key of a cursor, checked to be a key of the same list (state partition). */
export function decodeCursor(state: PacketState, cursor: string): Record<string, string> {
  if (cursor.length === 0 || cursor.length > MAX_CURSOR_LENGTH || !/^[A-Za-z0-9_-]+$/.test(cursor)) throw new InvalidCursorError();
  let body: CursorBody;
  try {
    body = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as CursorBody;
  } catch {
    throw new InvalidCursorError();
  }
  const k = body?.k;
  const strings =
    k &&
    typeof k === 'object' &&
    Object.keys(k).length === 4 &&
    ['pk', 'sk', 'statePk', 'stateSk'].every((n) => typeof (k as unknown as Record<string, unknown>)[n] === 'string');
  if (
    body?.v !== 1 ||
    body.s !== state ||
    !strings ||
    k.statePk !== statePkFor(state) ||
    k.sk !== 'PACKET' ||
    !isPacketId(k.pk.replace(/^PACKET#/, '')) ||
    !k.pk.startsWith('PACKET#')
  ) {
    throw new InvalidCursorError();
  }
  return { pk: k.pk, sk: k.sk, statePk: k.statePk, stateSk: k.stateSk };
}

export interface InboxPage {
  items: PacketSummary[];
  nextCursor?: string;
}

export async function listInbox(deps: Pick<FormsDependencies, 'store'>, options: { state: PacketState; limit: number; cursor?: string }): Promise<InboxPage> {
  const start = options.cursor !== undefined ? decodeCursor(options.state, options.cursor) : undefined;
  const page = await deps.store().queryByState(options.state, { limit: options.limit, exclusiveStartKey: start, newestFirst: true });
  return { items: page.rows.map((r) => r.summary), ...(page.lastKey ? { nextCursor: encodeCursor(options.state, page.lastKey) } : {}) };
}

export interface PacketDetail {
  packetId: string;
  state: PacketState;
  reason?: PacketReason;
  patientId?: string;
  requestedPatientId?: string;
  sourceSystemId: string;
  formId: string;
  submissionId: string;
  partnerId: string;
  receivedAt: string;
  stateChangedAt: string;
  formName?: string;
  patient: FormPatient;
  answers: Record<string, AnswerValue>;
  candidates: CandidateRecord[];
  /**
   * The chart's side, when the packet is held because it contradicts a patient it named
   * (demographics_mismatch) or a remembered link (link_conflict): the reviewer sees both.
   */
  chartPatient?: { patientId: string; firstName?: string; lastName: string; dob?: string };
  history: HistoryEntry[];
}

/**
 * A packet that is or was in the inbox, decrypted. Packets routed directly at intake were never
 * in the inbox and are not shown here (undefined, like an unknown id).
 */
export async function getInboxPacket(deps: Pick<FormsDependencies, 'store' | 'cipher' | 'patients'>, packetId: string): Promise<PacketDetail | undefined> {
  if (!isPacketId(packetId)) return undefined;
  const packet = await deps.store().getPacket(packetId);
  if (!packet || packet.state === 'routed') return undefined;
  const content = await deps.cipher().open(packet);
  const contradicted =
    packet.reason === 'demographics_mismatch' ? packet.requestedPatientId : packet.reason === 'link_conflict' ? packet.candidates?.[0]?.patientId : undefined;
  const chart = contradicted ? await deps.patients().getPatient(contradicted) : undefined;
  return {
    packetId: packet.packetId,
    state: packet.state,
    ...(packet.reason ? { reason: packet.reason } : {}),
    ...(packet.patientId ? { patientId: packet.patientId } : {}),
    ...(packet.requestedPatientId ? { requestedPatientId: packet.requestedPatientId } : {}),
    sourceSystemId: packet.sourceSystemId,
    formId: packet.formId,
    submissionId: packet.submissionId,
    partnerId: packet.partnerId,
    receivedAt: packet.receivedAt,
    stateChangedAt: packet.stateChangedAt,
    ...(content.formName !== undefined ? { formName: content.formName } : {}),
    patient: content.patient,
    answers: content.answers,
    candidates: packet.candidates ?? [],
    ...(chart
      ? {
          chartPatient: {
            patientId: chart.patientId,
            ...(chart.name?.given ? { firstName: chart.name.given } : {}),
            lastName: chart.name?.family ?? '',
            ...(chart.birthDate ? { dob: chart.birthDate } : {}),
          },
        }
      : {}),
    history: packet.history ?? [],
  };
}

export type RouteResult =
  | { kind: 'routed'; packet: Pick<PacketRecord, 'packetId' | 'state' | 'patientId'> }
  | { kind: 'packet_not_found' }
  | { kind: 'patient_not_found' }
  | { kind: 'already_routed'; state: PacketState; patientId?: string };

export async function routeInboxPacket(
  deps: Pick<FormsDependencies, 'store' | 'patients'>,
  input: { packetId: string; patientId: string; reviewer: { keyId: string; partnerId: string; staff?: { username: string } }; now: Date },
): Promise<RouteResult> {
  if (!isPacketId(input.packetId)) return { kind: 'packet_not_found' };
  const store = deps.store();
  const packet = await store.getPacket(input.packetId, { withContent: false });
  if (!packet || packet.state === 'routed') return { kind: 'packet_not_found' };
  // a retry of a routing that already changed the state (e.g. the caller saw a 503 after it):
  // finish the remaining work (the remembered link) and answer as the first call would have
  if (packet.state === 'routed_manually' && packet.patientId === input.patientId) return completeManualRouting(deps, packet, input);
  if (!INBOX_STATES.includes(packet.state)) return { kind: 'already_routed', state: packet.state, patientId: packet.patientId };
  if (!(await deps.patients().getPatient(input.patientId))) return { kind: 'patient_not_found' };

  const at = input.now.toISOString();
  const entry: HistoryEntry = {
    at,
    action: 'routed_manually',
    from: packet.state,
    state: 'routed_manually',
    actor: input.reviewer.staff ? 'staff' : 'api-key',
    keyId: input.reviewer.keyId,
    ...(input.reviewer.staff ? { staffUsername: input.reviewer.staff.username } : {}),
    partnerId: input.reviewer.partnerId,
    patientId: input.patientId,
  };
  const moved = await store.transition({
    packetId: packet.packetId,
    from: INBOX_STATES,
    to: 'routed_manually',
    at,
    sortTime: packet.receivedAt,
    patientId: input.patientId,
    entry,
  });
  if (!moved) {
    const now = await store.getPacket(packet.packetId, { withContent: false });
    if (now && now.state === 'routed_manually' && now.patientId === input.patientId) return completeManualRouting(deps, now, input);
    return { kind: 'already_routed', state: now?.state ?? packet.state, patientId: now?.patientId };
  }
  return completeManualRouting(deps, packet, input);
}

/** The work after the state change; safe to repeat (the link write is an upsert of the same value). */
async function completeManualRouting(
  deps: Pick<FormsDependencies, 'store' | 'patients'>,
  packet: { packetId: string; linkKey?: string; sourceSystemId: string; partnerId?: string },
  input: { patientId: string; reviewer: { keyId: string }; now: Date },
): Promise<RouteResult> {
  if (packet.linkKey) {
    // a reviewer's decision is remembered for the next packet from the same form tool patient
    await deps.store().putLink(
      packet.linkKey,
      {
        patientId: input.patientId,
        partnerId: packet.partnerId,
        sourceSystemId: packet.sourceSystemId,
        createdAt: input.now.toISOString(),
        createdBy: input.reviewer.keyId,
        packetId: packet.packetId,
      },
      { onlyIfAbsent: false },
    );
  }
  return { kind: 'routed', packet: { packetId: packet.packetId, state: 'routed_manually', patientId: input.patientId } };
}
