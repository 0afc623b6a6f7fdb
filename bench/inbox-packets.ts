/**
 * Inbox packets for the benches (bench/scale.ts, bench/inbox-reads.ts): receiveFormPacket, the real
 * intake code, builds each record (validation, encryption, match keys, state index keys) for a
 * patient the chart does not know, so every packet waits in the inbox; nothing is written here (the
 * caller writes the records in batches).
 */
import { receiveFormPacket, type Submitter } from '../lib/forms/intake';
import { matchKeys, packetCipher } from '../lib/forms/kms-wiring';
import type { PacketIntakeWriter } from '../lib/forms/packet-store';
import type { FormIntakeBody, PacketRecord } from '../lib/forms/types';

const FIRST_PACKET = Date.UTC(2026, 0, 1);

/** The records of packets [from, to), received one second apart from 2026-01-01, ids `<idPrefix>-<i>`. */
export async function buildInboxPackets(from: number, to: number, idPrefix: string, submitter: Submitter): Promise<PacketRecord[]> {
  const built: PacketRecord[] = [];
  const collector = {
    getPacket: () => Promise.resolve(undefined),
    createPacket: (record: PacketRecord) => {
      built.push(record);
      return Promise.resolve('created' as const);
    },
  } as unknown as PacketIntakeWriter;
  const deps = {
    store: () => collector,
    patients: () => ({ getPatient: () => Promise.resolve(undefined) }),
    cipher: packetCipher,
    keys: matchKeys,
    queue: () => ({ send: () => Promise.resolve() }),
  } as unknown as Parameters<typeof receiveFormPacket>[3];
  for (let i = from; i < to; i += 1) {
    const body: FormIntakeBody = {
      payload: {
        sourceSystemId: 'demo-form-tool',
        formId: 'intake-v1',
        formName: 'New patient intake',
        submissionId: `${idPrefix}-${i}`,
        patientId: `${idPrefix}-unknown-${i}`,
        patient: { externalPatientId: `EXT-${i}`, firstName: 'Casey', lastName: `Example${i % 997}`, dob: '1984-03-09', email: 'casey@example.com' },
        answers: { reason: 'Annual physical', smoker: false, allergies: 'none known', medications: 'metformin 500 mg twice daily' },
      },
    };
    await receiveFormPacket(body, submitter, new Date(FIRST_PACKET + i * 1000), deps);
  }
  return built;
}
