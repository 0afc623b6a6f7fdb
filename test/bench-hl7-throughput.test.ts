/**
 * Measurement 4's harness (bench/hl7-throughput.ts): it bundles the encoder and the peers with the Lambda
 * settings, runs the bundle in a child node process and returns both messages' figures, with our bundled
 * output byte-equal to the expected output and @medplum/core's equal to ours. A few messages per candidate:
 * correctness of the harness only, no figure is asserted.
 */
import { measureHl7Throughput } from '../bench/hl7-throughput';
import { loadFixture } from './hl7/fixtures';

const tiny = { roundMs: 1, rounds: 1, warmupMs: 0, batch: 1, progress: (): void => undefined };

describe('bundled HL7 throughput harness', () => {
  it('builds, runs the bundle under node and returns both messages, ours equal to the expected bytes', () => {
    const result = measureHl7Throughput(tiny);
    expect(result.messages.map((m) => m.message)).toEqual(['note (MDM^T02)', 'summary, 200 records (ORU^R01)']);
    for (const message of result.messages) {
      expect(message.oursEqualsExpected).toBe(true);
      expect(message.candidates.map((c) => c.name)).toEqual(['lib/hl7 (ours)', '@medplum/core Hl7Message', 'hl7v2 1.8.0 HL7Message']);
      expect(message.candidates[1]!.identicalToOurs).toBe(true);
      for (const candidate of message.candidates) expect(candidate.messagesPerSecond).toBeGreaterThan(0);
    }
    expect(result.messages[0]!.bytes).toBe(Buffer.byteLength(loadFixture('mdm-t02-note')));
    expect(result.messages[1]!.segments).toBe(1305);
    expect(result.method).toMatch(/^the bundled code under plain node: .* esbuild ESM, minified, target node24 .* run by node v\d+/);
  });

  it('fails the run when our bundled output differs from the expected output', () => {
    const tampered = loadFixture('mdm-t02-note').replace('Okafor', 'Okafar');
    expect(() => measureHl7Throughput({ ...tiny, expectedNote: tampered })).toThrow(
      /note \(MDM\^T02\): our bundled output differs from the expected output before timing/,
    );
  });
});
