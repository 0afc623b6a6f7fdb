/**
 * GET /interopInbox?state=&limit=&cursor= — scope interop:inbox:review.
 *
 * Packets waiting in the interop inbox, newest first: state pending_review (default) or
 * pending_match; limit 1-100 (default 25); cursor = nextCursor of the previous page (opaque).
 * Summaries only (ids, states, reason codes, times, candidate counts): no PHI, no decryption.
 * 200 a page | 400 a bad state, limit or cursor (InvalidParameterError, InvalidCursorError).
 */
import { listInteropInboxRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { InvalidParameterError } from '../lib/domain-errors';
import { optionalIntegerParameter, optionalSingleParameter } from '../lib/http/query';
import { packetStateReader } from '../lib/forms/table-wiring';
import { DEFAULT_INBOX_LIMIT, LISTABLE_STATES, MAX_INBOX_LIMIT, listInbox } from '../lib/forms/inbox';
import type { PacketState } from '../lib/forms/types';

export const handler = httpEndpoint(listInteropInboxRoute, async (request) => {
  const event = request.event;
  const stateParam = optionalSingleParameter(event, 'state') ?? 'pending_review';
  if (!LISTABLE_STATES.includes(stateParam as PacketState)) {
    const message = `must be one of: ${LISTABLE_STATES.join(', ')}`;
    throw new InvalidParameterError('state', message, `state ${message}`);
  }
  const state = stateParam as PacketState;
  const limit = optionalIntegerParameter(event, 'limit', { min: 1, max: MAX_INBOX_LIMIT, fallback: DEFAULT_INBOX_LIMIT });
  const cursor = optionalSingleParameter(event, 'cursor');
  request.audit({ action: 'inbox.list', resourceIds: { state } });
  const page = await listInbox({ store: packetStateReader }, { state, limit, cursor });
  return jsonResponse(200, { state, limit, items: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}), requestId: request.requestId });
});
