/**
 * POST /interopInbox/held/{heldId}/route — scope interop:inbox:review.
 *
 * Body { "patientId": "..." } (schemas/inbox-route.schema.json, the packet route's body). Files a held
 * record under a chart patient, then marks it routed (lib/intake/held-review.ts): a document becomes a
 * note of the patient, a partner identity is linked to the patient (the partner's later messages for
 * that person resolve to it), held lab results get a new current version for the patient. Audited
 * under the chart patient. The same route again after a failure part way completes it.
 * 200 routed | 400 bad body (ValidationFailed) | 404 unknown held record (HeldRecordNotFoundError) or
 * patient (RecordNotFoundError) | 409 already routed (HeldAlreadyRoutedError, with routedTo), or the
 * patient has another note with the document's id (HeldNoteConflictError; nothing changed).
 */
import { routeHeldRecordRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { readJsonBody } from '../lib/http/json-body';
import { assertValid } from '../lib/schemas/field-errors';
import validateRouteBody from '../lib/forms/generated/inbox-route.validator';
import { routeHeld } from '../lib/intake/held-route';
import { heldRouteDependencies } from '../lib/intake/held-review-wiring';
import { heldLabResultDependencies } from '../lib/results/result-wiring';

export const handler = httpEndpoint(routeHeldRecordRoute, async (request) => {
  const heldId = request.event.pathParameters?.heldId ?? '';
  const { value } = readJsonBody(request.event);
  const body = assertValid<{ patientId: string }>(validateRouteBody, value, 'the route request');
  request.audit({ action: 'inbox.held_route', patientId: body.patientId, resourceIds: { heldId: heldId.slice(0, 128) } });
  const result = await routeHeld(heldRouteDependencies(heldLabResultDependencies), {
    heldId,
    patientId: body.patientId,
    reviewer: request.principal,
    requestId: request.requestId,
    now: request.now,
  });
  request.audit({ action: 'inbox.held_route', patientId: body.patientId, resourceIds: { heldId: result.heldId, kind: result.kind } });
  return jsonResponse(200, {
    status: 'routed',
    heldId: result.heldId,
    kind: result.kind,
    routedTo: result.routedTo,
    ...(result.noteId ? { noteId: result.noteId } : {}),
    ...(result.resultIds ? { resultIds: result.resultIds } : {}),
    requestId: request.requestId,
  });
});
