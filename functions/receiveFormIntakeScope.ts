/**
 * POST /receiveFormIntakeScope — scope interop:ingest:forms.
 *
 * Body: { "payload": { sourceSystemId, formId, formName?, submissionId, patient: { externalPatientId?,
 * firstName, lastName, dob?, email? }, answers, patientId? } } (schemas/form-packet.schema.json;
 * patientId is also accepted at payload.patient.patientId).
 *
 * 201 routed to the named patient | 202 held in the interop inbox (pending_match: queued for
 * matching; pending_review: the named patient is unknown) | 200 the same submission again (the
 * first packet, nothing stored) | 400 every bad field | 409 submission id used by another partner
 * | 413 content over 200 KiB. Body: { status, packetId, routedTo, state, requestId }.
 */
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { readJsonBody } from '../lib/http/json-body';
import { HttpProblem } from '../lib/http/problem';
import { packetCipher } from '../lib/forms/kms-dependencies';
import { matchingQueue } from '../lib/forms/queue-dependencies';
import { formsDependenciesWith, patientDirectory } from '../lib/forms/table-dependencies';
import { receiveFormPacket, validateIntakeBody } from '../lib/forms/intake';
import type { PacketRecord } from '../lib/forms/types';

function answer(status: 'accepted' | 'duplicate', packet: PacketRecord, requestId: string) {
  const routedTo = packet.patientId ?? 'inbox';
  const code = status === 'duplicate' ? 200 : packet.patientId ? 201 : 202;
  return jsonResponse(code, { status, packetId: packet.packetId, routedTo, state: packet.state, requestId });
}

export const handler = httpEndpoint('receiveFormIntakeScope', async (request) => {
  const { value } = readJsonBody(request.event);
  const validation = validateIntakeBody(value, request.now);
  if (!validation.ok) throw new HttpProblem('validation', 'the form packet failed validation', { errors: validation.errors });

  const result = await receiveFormPacket(validation.body, request.principal, request.now, formsDependenciesWith('receiveFormIntakeScope', { patients: patientDirectory, cipher: packetCipher, queue: matchingQueue }));
  if (result.kind === 'created' || result.kind === 'duplicate') {
    request.audit({ action: result.kind === 'created' ? 'forms.receive' : 'forms.receive_duplicate', patientId: result.packet.patientId, resourceIds: { packetId: result.packet.packetId } });
  }
  switch (result.kind) {
    case 'created':
      return answer('accepted', result.packet, request.requestId);
    case 'duplicate':
      return answer('duplicate', result.packet, request.requestId);
    case 'conflict':
      throw new HttpProblem('conflict', 'this sourceSystemId and submissionId were already submitted by another partner');
    case 'too_large':
      throw new HttpProblem('payloadTooLarge', `the packet content (patient, answers, form name) exceeds ${result.limit} bytes`);
  }
});
