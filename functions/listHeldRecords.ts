/**
 * GET /interopInbox/held?state=&limit=&cursor= — scope interop:inbox:read.
 *
 * Records HL7 intake held for review (docs/write-authority.md): lab results, documents and partner
 * identities it could not file to a chart patient. Oldest first (the longest waiting first); state
 * held (default) or routed; limit 1-100 (default 25); cursor = nextCursor of the previous page.
 * Each item: heldId, kind, state, reason, receivedAt, partnerId, sender, the person as the sender
 * described them (name, birth date, sex, identifiers) and a short description (document: author and
 * time, never the text; lab-result: how many results; identity: nothing more).
 * 200 a page | 400 a bad state, limit or cursor (InvalidParameterError).
 */
import { listHeldRecordsRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { InvalidParameterError } from '../lib/domain-errors';
import { optionalIntegerParameter, optionalSingleParameter } from '../lib/http/query';
import type { HeldState } from '../lib/intake/held-records';
import { DEFAULT_HELD_LIMIT, HELD_STATES, MAX_HELD_LIMIT, listHeld } from '../lib/intake/held-review';
import { heldReadDependencies } from '../lib/intake/held-review-wiring';

export const handler = httpEndpoint(listHeldRecordsRoute, async (request) => {
  const event = request.event;
  const stateParam = optionalSingleParameter(event, 'state') ?? 'held';
  if (!HELD_STATES.includes(stateParam as HeldState)) {
    const message = `must be one of: ${HELD_STATES.join(', ')}`;
    throw new InvalidParameterError('state', message, `state ${message}`);
  }
  const state = stateParam as HeldState;
  const limit = optionalIntegerParameter(event, 'limit', { min: 1, max: MAX_HELD_LIMIT, fallback: DEFAULT_HELD_LIMIT });
  const cursor = optionalSingleParameter(event, 'cursor');
  request.audit({ action: 'inbox.held_list', resourceIds: { state } });
  const page = await listHeld(heldReadDependencies(), { state, limit, cursor });
  return jsonResponse(200, { state, limit, items: page.items, ...(page.nextCursor ? { nextCursor: page.nextCursor } : {}), requestId: request.requestId });
});
