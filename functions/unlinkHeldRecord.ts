/**
 * POST /interopInbox/held/{heldId}/unlink?endRelationship=true|false — scope interop:inbox:review.
 *
 * Ends the staff link of a routed partner identity (lib/intake/held-route.ts unlinkHeld): the partner's
 * later messages for the person resolve as if never linked (the chart's MRN index, else held), and the
 * record is back in the queue for a new decision. With endRelationship=true the partner's relationship
 * with the patient ends as well (kept otherwise: other records may rest on it). Audited under the patient.
 * 200 unlinked | 400 a bad endRelationship | 404 unknown held record | 409 not a routed identity, a link
 * made by matching the chart, or the record changed meanwhile.
 */
import { unlinkHeldRecordRoute } from '../lib/config/service';
import { InvalidParameterError } from '../lib/domain-errors';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { optionalSingleParameter } from '../lib/http/query';
import { unlinkHeld } from '../lib/intake/held-route';
import { heldRouteDependencies } from '../lib/intake/held-review-wiring';

// unlinking files no lab result: the lab result services are never asked for
const noLabResults = () => {
  throw new Error('unlinking a held identity files no lab results');
};

export const handler = httpEndpoint(unlinkHeldRecordRoute, async (request) => {
  const heldId = request.event.pathParameters?.heldId ?? '';
  const flag = optionalSingleParameter(request.event, 'endRelationship') ?? 'false';
  if (flag !== 'true' && flag !== 'false') throw new InvalidParameterError('endRelationship', 'must be true or false', 'endRelationship must be true or false');
  const result = await unlinkHeld(heldRouteDependencies(noLabResults), {
    heldId,
    endRelationship: flag === 'true',
    reviewer: request.principal,
    now: request.now,
  });
  request.audit({ action: 'inbox.held_unlink', patientId: result.unlinkedFrom, resourceIds: { heldId: result.heldId } });
  return jsonResponse(200, { status: 'unlinked', ...result, requestId: request.requestId });
});
