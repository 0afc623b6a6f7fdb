/**
 * Packet contents (patient details, answers, form name) are envelope-encrypted exactly like lab
 * results (lib/crypto/envelope.ts): data key context { service: interop, purpose: form-packet },
 * per-record context { recordType: form-packet, packetId, sourceSystemId } bound as AAD, so an
 * envelope copied onto another packet item does not decrypt.
 */
import type { EnvelopeEncryptor } from '../crypto/envelope';
import { serializeEnvelope } from '../crypto/envelope-format';
import type { PacketContent } from './types';

export const PACKET_PURPOSE = 'form-packet';

function recordContext(packetId: string, sourceSystemId: string): Record<string, string> {
  return { recordType: PACKET_PURPOSE, packetId, sourceSystemId };
}

export class PacketCipher {
  constructor(private readonly encryptor: EnvelopeEncryptor) {}

  /** The serialized envelope of the content (stored as the packet's `content`). */
  async seal(packetId: string, sourceSystemId: string, plaintext: string): Promise<string> {
    const envelope = await this.encryptor.encrypt(plaintext, recordContext(packetId, sourceSystemId), { purpose: PACKET_PURPOSE });
    return serializeEnvelope(envelope);
  }

  async open(packet: { packetId: string; sourceSystemId: string; content: string }): Promise<PacketContent> {
    const bytes = await this.encryptor.decrypt(packet.content, recordContext(packet.packetId, packet.sourceSystemId));
    try {
      return JSON.parse(bytes.toString('utf8')) as PacketContent;
    } finally {
      bytes.fill(0);
    }
  }
}
