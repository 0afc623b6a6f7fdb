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
 * 400 every bad field | 403 sourceSystemId not owned by the key's partner | 409 the same
 * submission id with different content | 413 content over 200 KiB.
 */
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { readJsonBody } from '../lib/http/json-body';
import { HttpProblem } from '../lib/http/problem';
import { matchKeys, packetCipher } from '../lib/forms/kms-wiring';
import { matchingQueue } from '../lib/forms/queue-wiring';
import { formsStore, patientDirectory } from '../lib/forms/table-wiring';
import { receiveFormPacket, validateIntakeBody } from '../lib/forms/intake';
import type { PacketRecord } from '../lib/forms/types';

/** One answer for every accepted packet: nothing in it depends on the chart or on the routing. */
function accepted(packet: PacketRecord, requestId: string) {
  return jsonResponse(202, { status: 'accepted', packetId: packet.packetId, requestId });
}

export const handler = httpEndpoint('receiveFormIntakeScope', async (request) => {
  const { value } = readJsonBody(request.event);
  const validation = validateIntakeBody(value, request.now);
  if (!validation.ok) throw new HttpProblem('validation', 'the form packet failed validation', { errors: validation.errors });

  const result = await receiveFormPacket(validation.body, request.principal, request.now, {
    store: formsStore,
    patients: patientDirectory,
    cipher: packetCipher,
    keys: matchKeys,
    queue: matchingQueue,
  });
  if (result.kind === 'created' || result.kind === 'duplicate') {
    request.audit({
      action: result.kind === 'created' ? 'forms.receive' : 'forms.receive_duplicate',
      patientId: result.packet.patientId,
      resourceIds: { packetId: result.packet.packetId },
    });
  }
  switch (result.kind) {
    case 'created':
    case 'duplicate':
      return accepted(result.packet, request.requestId);
    case 'forbidden_source':
      throw new HttpProblem('forbidden', "this API key's partner does not own this sourceSystemId");
    case 'changed':
      throw new HttpProblem('conflict', 'this submissionId was already received with different content; send a changed form with a new submissionId');
    case 'conflict':
      throw new HttpProblem('conflict', 'this sourceSystemId and submissionId were already submitted by another partner');
    case 'too_large':
      throw new HttpProblem('payloadTooLarge', `the packet content (patient, answers, form name) exceeds ${result.limit} bytes`);
  }
});
