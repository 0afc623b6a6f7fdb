/**
 * The small fixed-seed version of `npm run eval:matching` (bench/matching/eval.ts): a synthetic
 * population with twins, namesakes, common-name clusters, non-ASCII and hyphenated names, loaded
 * with the real import CLI, packets of every variation kind posted through the endpoint and decided
 * by the real worker. Asserts safety only (the auto-route rate is the benchmark's figure).
 */
import { confusionTable, runMatchingEval } from '../../bench/matching/eval';
import { generatePopulation, PACKET_KINDS } from '../../bench/matching/population';

describe('matching evaluation, fixed seed', () => {
  it('the population generator is deterministic and has every ingredient', () => {
    const a = generatePopulation({ seed: 11, size: 300 }, 6);
    expect(generatePopulation({ seed: 11, size: 300 }, 6)).toEqual(a);
    expect(a.patients).toHaveLength(300);
    expect(new Set(a.packets.map((p) => p.kind))).toEqual(new Set(PACKET_KINDS));
    expect(a.patients.some((p) => /[^\x00-\x7f]/.test(p.name.family + p.name.given))).toBe(true);
    expect(a.patients.some((p) => p.name.family.includes('-'))).toBe(true);
  });

  it('routes no packet to the wrong patient and never auto-routes namesakes, twins or strangers', async () => {
    const result = await runMatchingEval({ seed: 20261123, size: 300, perKind: 8 });
    const table = confusionTable(result);
    expect({ wrong: result.total.wrong, unsafe: result.unsafeRoutes, table }).toEqual({ wrong: 0, unsafe: 0, table });
    expect(result.total.packets).toBeGreaterThanOrEqual(80);
    // every identifiable packet kind was decided by the worker, not left pending
    expect(result.total.right + result.total.held).toBe(result.total.packets);
  }, 240_000);
});
