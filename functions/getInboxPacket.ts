/**
 * GET /interopInbox/{packetId} — scope interop:inbox:review.
 *
 * One packet that is or was in the interop inbox, decrypted: form, patient as the form tool
 * described them, answers, candidates with scores, and the state history (time, actor, action).
 * 200 the packet | 404 an unknown id, or a packet routed directly at intake (never in the inbox):
 * InboxPacketNotFoundError.
 */
import { getInboxPacketRoute } from '../lib/config/service';
import { httpEndpoint, jsonResponse } from '../lib/http/endpoint';
import { packetCipher } from '../lib/forms/kms-wiring';
import { packetReader, patientDirectory } from '../lib/forms/table-wiring';
import { getInboxPacket } from '../lib/forms/inbox';

export const handler = httpEndpoint(getInboxPacketRoute, async (request) => {
  const packetId = request.event.pathParameters?.packetId ?? '';
  request.audit({ action: 'inbox.read', resourceIds: { packetId: packetId.slice(0, 128) } });
  const packet = await getInboxPacket({ store: packetReader, cipher: packetCipher, patients: patientDirectory }, packetId);
  return jsonResponse(200, { ...packet, requestId: request.requestId });
});
