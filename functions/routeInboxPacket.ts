/**
 * POST /interopInbox/{packetId}/route — scope interop:inbox:review.
 *
 * Body { "patientId": "..." } (schemas/inbox-route.schema.json). Routes a packet waiting in the
 * inbox (pending_review or pending_match) to the patient: state routed_manually, recorded in the
 * history with the reviewer's keyId and partnerId; the (sourceSystemId, externalPatientId) link is
 * remembered for the matcher, and the packet's partner is related to the patient (source held-route).
 * 200 routed | 400 bad body (ValidationFailed) | 404 unknown packet (InboxPacketNotFoundError) or
 * patient (RecordNotFoundError) | 409 already routed (AlreadyRoutedError, with state and routedTo).
 */
import { routeInboxPacketRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { readJsonBody } from '../lib/http/json-body';
import { assertValid } from '../lib/schemas/field-errors';
import { formsStore, patientDirectory } from '../lib/forms/table-wiring';
import validateRouteBody from '../lib/forms/generated/inbox-route.validator';
import { routeInboxPacket } from '../lib/forms/inbox';
import { relationshipTable } from '../lib/relationships/relationship-wiring';
import { relate } from '../lib/relationships/relationships';

export const handler = httpEndpoint(routeInboxPacketRoute, async (request) => {
  const packetId = request.event.pathParameters?.packetId ?? '';
  const { value } = readJsonBody(request.event);
  const body = assertValid<{ patientId: string }>(validateRouteBody, value, 'the route request');
  request.audit({ action: 'inbox.route', patientId: body.patientId, resourceIds: { packetId: packetId.slice(0, 128) } });
  const result = await routeInboxPacket(
    { store: formsStore, patients: patientDirectory, relationships: { relate: (relationship, now) => relate(relationshipTable(), relationship, { now }) } },
    {
      packetId,
      patientId: body.patientId,
      reviewer: request.principal,
      now: request.now,
    },
  );
  return jsonResponse(200, {
    status: 'routed',
    packetId: result.packet.packetId,
    routedTo: result.packet.patientId,
    state: result.packet.state,
    requestId: request.requestId,
  });
});
