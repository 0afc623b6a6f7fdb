/**
 * POST /receiveFormIntakeScope — scope interop:ingest:forms.
 *
 * Body: { "payload": { sourceSystemId, formId, formName?, submissionId, patient: { externalPatientId?,
 * firstName, lastName, dob?, email? }, answers, patientId? } } (schemas/form-packet.schema.json;
 * patientId is also accepted at payload.patient.patientId).
 *
 * 202 { status: "accepted", packetId, requestId } whatever happens next: routed to the named
 * patient, held in the inbox, queued for matching, or the same submission again (nothing stored).
 * The answer never says whether a patient exists or where the packet went (docs/forms.md).
 * 400 every bad field (ValidationFailedError) | 403 sourceSystemId not owned by the key's partner
 * (ForbiddenByPolicyError) | 409 the same submission id with different content, or one first used
 * by another partner (ConflictError) | 413 content over 200 KiB (ContentTooLargeError).
 */
import { receiveFormIntakeScopeRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { readJsonBody } from '../lib/http/json-body';
import { ValidationFailedError } from '../lib/domain-errors';
import { matchKeys, packetCipher } from '../lib/forms/kms-wiring';
import { matchingQueue } from '../lib/forms/queue-wiring';
import { packetIntakeWriter, patientDirectory } from '../lib/forms/table-wiring';
import { receiveFormPacket, validateIntakeBody } from '../lib/forms/intake';
import type { PacketRecord } from '../lib/forms/types';
import { relationshipLookup } from '../lib/relationships/relationship-wiring';

/** One answer for every accepted packet: nothing in it depends on the chart or on the routing. */
function accepted(packet: PacketRecord, requestId: string) {
  return jsonResponse(202, { status: 'accepted', packetId: packet.packetId, requestId });
}

export const handler = httpEndpoint(receiveFormIntakeScopeRoute, async (request) => {
  const { value } = readJsonBody(request.event);
  const validation = validateIntakeBody(value, request.now);
  if (!validation.ok) throw new ValidationFailedError('the form packet failed validation', validation.errors);

  const result = await receiveFormPacket(validation.body, request.principal, request.now, {
    store: packetIntakeWriter,
    patients: patientDirectory,
    cipher: packetCipher,
    keys: matchKeys,
    queue: matchingQueue,
    relationships: relationshipLookup,
  });
  request.audit({
    action: result.kind === 'created' ? 'forms.receive' : 'forms.receive_duplicate',
    patientId: result.packet.patientId,
    resourceIds: { packetId: result.packet.packetId },
  });
  return accepted(result.packet, request.requestId);
});
