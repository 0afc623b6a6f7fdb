import { RecordNotFoundError } from '../domain-errors';
import type { Principal } from '../keys/access-decision';
import { exportLabResultMessage, type LabResultExportDependencies } from './lab-result-export';

const principal = (partnerId: string): Principal => ({ keyId: 'k1', partnerId, scopes: ['interop:export:hl7'], allowedSenderIds: [] });

/** A reader that stands for the stored version's plain attributes and records whether it went on to decrypt. */
function readerOf(plain: { partnerId: string; patientMatched: boolean }): LabResultExportDependencies & { decrypted: number } {
  const deps = {
    decrypted: 0,
    results: {
      readCurrent: async (_resultId: string, admits?: (v: { partnerId: string; patientMatched: boolean }) => boolean) => {
        if (admits && !admits(plain)) return undefined;
        deps.decrypted += 1;
        return undefined; // the decrypted version does not matter here
      },
    },
    chart: { getPatient: async () => undefined },
  };
  return deps as unknown as LabResultExportDependencies & { decrypted: number };
}

describe('the lab result export reads a result not filed to the chart only for its own partner, and decides before decrypting', () => {
  it("another partner's unfiled result: not found, nothing decrypted", async () => {
    const deps = readerOf({ partnerId: 'lab-a', patientMatched: false });
    await expect(exportLabResultMessage(deps, { resultId: 'lr_x' }, { principal: principal('ehr'), now: new Date() })).rejects.toBeInstanceOf(
      RecordNotFoundError,
    );
    expect(deps.decrypted).toBe(0);
  });

  it('its own partner, or any exporter of a chart result, gets to the decrypting read', async () => {
    for (const [plain, caller] of [
      [{ partnerId: 'lab-a', patientMatched: false }, 'lab-a'],
      [{ partnerId: 'lab-a', patientMatched: true }, 'ehr'],
    ] as const) {
      const deps = readerOf(plain);
      await expect(exportLabResultMessage(deps, { resultId: 'lr_x' }, { principal: principal(caller), now: new Date() })).rejects.toBeInstanceOf(
        RecordNotFoundError,
      );
      expect(deps.decrypted).toBe(1);
    }
  });
});
