/**
 * The interop inbox for staff (scope interop:inbox:review):
 *   listInbox        packets awaiting review (or awaiting the matcher), newest first, one GSI Query
 *                    per page, opaque cursor; summaries only (no PHI, no decryption)
 *   getInboxPacket   one packet decrypted, with its history and candidates
 *   routeInboxPacket staff routes a packet to a patient: routed_manually (conditional update, so a
 *                    packet routed meanwhile by the matcher or another reviewer answers 409)
 */
import type { FormsDependencies, StorePart } from './forms-dependencies';
import { ConflictError, InvalidParameterError, RecordNotFoundError } from '../domain-errors';
import { isPacketId } from './packet-id';
import { statePartitions, statePkFor } from './packet-items';
import type { PacketReader, PacketStateReader } from './packet-reader';
import type { AnswerValue, CandidateRecord, FormPatient, HistoryEntry, PacketReason, PacketRecord, PacketState, PacketSummary } from './types';
import { INBOX_STATES } from './types';
import { DEFAULT_PURPOSE_OF_USE, type PartnerPatientRelationship } from '../relationships/relationships';

/** The relationship write of a staff routing (relate: a holding relationship is left as it is). */
export interface InboxRelationships {
  relate(relationship: PartnerPatientRelationship, now: Date): Promise<unknown>;
}

export const DEFAULT_INBOX_LIMIT = 25;
export const MAX_INBOX_LIMIT = 100;
/** States the list can show; the default is the review queue. */
export const LISTABLE_STATES: readonly PacketState[] = INBOX_STATES;
const MAX_CURSOR_LENGTH = 2048;

export class InvalidCursorError extends InvalidParameterError {
  override readonly name = 'InvalidCursorError';
  constructor() {
    super('cursor', 'is not a cursor returned by this list', 'cursor is not a cursor returned by this list');
  }
}

/** The one answer for an unknown packet id and for a packet that never waited in the inbox. */
export class InboxPacketNotFoundError extends RecordNotFoundError {
  override readonly name = 'InboxPacketNotFoundError';
  constructor() {
    super('inbox packet', 'no inbox packet with this id');
  }
}

/**
 * The packet `packetId` if it is or was in the inbox; packets routed directly at intake were never
 * in the inbox and are not found, like an unknown id (InboxPacketNotFoundError).
 */
export async function inboxPacket(store: Pick<PacketReader, 'getPacket'>, packetId: string, options: { withContent?: boolean } = {}): Promise<PacketRecord> {
  const packet = isPacketId(packetId) ? await store.getPacket(packetId, options) : undefined;
  if (!packet || packet.state === 'routed') throw new InboxPacketNotFoundError();
  return packet;
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
    k.sk !== 'PACKET' ||
    !isPacketId(k.pk.replace(/^PACKET#/, '')) ||
    !k.pk.startsWith('PACKET#') ||
    // the packet's own shard of the state, or the legacy unsharded partition
    (k.statePk !== statePkFor(state, k.pk.slice('PACKET#'.length)) && k.statePk !== statePartitions(state)[0])
  ) {
    throw new InvalidCursorError();
  }
  return { pk: k.pk, sk: k.sk, statePk: k.statePk, stateSk: k.stateSk };
}

export interface InboxPage {
  items: PacketSummary[];
  nextCursor?: string;
}

export async function listInbox(
  deps: StorePart<Pick<PacketStateReader, 'queryByState'>>,
  options: { state: PacketState; limit: number; cursor?: string },
): Promise<InboxPage> {
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
   * (demographics_mismatch) or a remembered link (link_conflict), or names or matches a patient its
   * partner is not related to (no_relationship): the reviewer sees both.
   */
  chartPatient?: { patientId: string; firstName?: string; lastName: string; dob?: string };
  history: HistoryEntry[];
}

/** A packet that is or was in the inbox, decrypted (InboxPacketNotFoundError otherwise). */
export async function getInboxPacket(
  deps: Pick<FormsDependencies, 'cipher' | 'patients'> & StorePart<Pick<PacketReader, 'getPacket'>>,
  packetId: string,
): Promise<PacketDetail> {
  const packet = await inboxPacket(deps.store(), packetId);
  const content = await deps.cipher().open(packet);
  // the patient the packet named or the matcher found, when the packet is held against it: contradicted
  // (demographics_mismatch, link_conflict) or not served by the partner (no_relationship)
  const contradicted =
    packet.reason === 'demographics_mismatch'
      ? packet.requestedPatientId
      : packet.reason === 'link_conflict'
        ? packet.candidates?.[0]?.patientId
        : packet.reason === 'no_relationship'
          ? (packet.requestedPatientId ?? packet.candidates?.[0]?.patientId)
          : undefined;
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

export interface RouteResult {
  packet: Pick<PacketRecord, 'packetId' | 'state' | 'patientId'>;
}

/** The packet left the inbox before this routing (another reviewer, or the matcher). */
export class AlreadyRoutedError extends ConflictError {
  override readonly name = 'AlreadyRoutedError';
  constructor(state: PacketState, patientId?: string) {
    super('the packet has already been routed to a patient', { state, ...(patientId ? { routedTo: patientId } : {}) });
  }
}

/**
 * Routes an inbox packet to a chart patient: InboxPacketNotFoundError, RecordNotFoundError for an
 * unknown patient, AlreadyRoutedError when it left the inbox meanwhile.
 */
export async function routeInboxPacket(
  deps: Pick<FormsDependencies, 'store' | 'patients'> & { relationships: InboxRelationships },
  input: { packetId: string; patientId: string; reviewer: { keyId: string; partnerId: string; staff?: { username: string } }; now: Date },
): Promise<RouteResult> {
  const store = deps.store();
  const packet = await inboxPacket(store, input.packetId, { withContent: false });
  // a retry of a routing that already changed the state (e.g. the caller saw a 503 after it):
  // finish the remaining work (the remembered link) and answer as the first call would have
  if (packet.state === 'routed_manually' && packet.patientId === input.patientId) return completeManualRouting(deps, packet, input);
  if (!INBOX_STATES.includes(packet.state)) throw new AlreadyRoutedError(packet.state, packet.patientId);
  if (!(await deps.patients().getPatient(input.patientId))) throw new RecordNotFoundError('patient', 'no patient with this patientId');

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
    throw new AlreadyRoutedError(now?.state ?? packet.state, now?.patientId);
  }
  return completeManualRouting(deps, packet, input);
}

/** The work after the state change; safe to repeat (the link write is an upsert of the same value). */
async function completeManualRouting(
  deps: Pick<FormsDependencies, 'store'> & { relationships: InboxRelationships },
  packet: { packetId: string; linkKey?: string; sourceSystemId: string; partnerId?: string },
  input: { patientId: string; reviewer: { keyId: string; staff?: { username: string } }; now: Date },
): Promise<RouteResult> {
  // the reviewer decided the form tool serves this patient: it is related to the patient (a holding
  // relationship is left as it is), so the link below routes its next packet for the patient
  if (packet.partnerId)
    await deps.relationships.relate(
      {
        partnerId: packet.partnerId,
        patientId: input.patientId,
        purpose: DEFAULT_PURPOSE_OF_USE,
        source: 'held-route',
        since: input.now.toISOString(),
        createdBy: input.reviewer.staff?.username ?? input.reviewer.keyId,
      },
      input.now,
    );
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
  return { packet: { packetId: packet.packetId, state: 'routed_manually', patientId: input.patientId } };
}
