/**
 * The timed part of measurement 4, run BUNDLED: bench/hl7-throughput.ts bundles this module with esbuild
 * (the Lambda settings) and runs the bundle in a child `node` process (no tsx), so lib/hl7 and the peers
 * are timed as the Lambda runs them. Never imported by the parent at run time (only its types).
 *
 * The child reads its job (a JSON file named on the command line), measures or profiles, and prints one
 * line `BENCH_RESULT <json>`. Our output is compared byte for byte with the expected output (the
 * reviewed fixture for the note, the source encoder's output for the summary) before and after the timed
 * rounds; a difference fails the run.
 */
import { Hl7Field, Hl7Message as MedplumMessage, Hl7Segment as MedplumSegment } from '@medplum/core';
import { HL7Message as Hl7v2Message } from 'hl7v2';
import { readFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { encodeNoteMessage, encodePatientSummaryMessage } from '../lib/hl7';
import type { CandidateResult, MessageResult } from './hl7-throughput';
import { layoutOf, noteInput, summaryInput, type Layout } from './hl7-throughput-inputs';
import { median, round } from './stats';

/** What the parent asks for. */
export interface ChildJob {
  mode: 'measure' | 'profile';
  roundMs: number;
  rounds: number;
  /** warm-up per candidate before any timing */
  warmupMs: number;
  /** messages built between two reads of the clock */
  batch: number;
  /** profile: how long to run our summary encoder under the profiler */
  profileMs: number;
  /** files holding the expected output of our encoder, CR-terminated segments */
  expectedNoteFile: string;
  expectedSummaryFile: string;
}

/** What the child prints after `BENCH_RESULT `. */
export type ChildOutput = { mode: 'measure'; messages: MessageResult[]; node: string } | { mode: 'profile'; profile: CpuProfile };

export interface CpuProfile {
  nodes: Array<{ id: number; children?: number[]; callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number } }>;
  samples: number[];
  timeDeltas: number[];
}

const ESCAPES: Record<string, string> = { '\\': '\\E\\', '|': '\\F\\', '^': '\\S\\', '&': '\\T\\', '~': '\\R\\' };

/** The minimal escape a @medplum/core user writes: delimiters, and a line break as \.br\. */
function medplumEscape(value: string): string {
  if (!/[\\|^&~\r\n]/.test(value)) return value;
  return value.replace(/[\\|^&~]/g, (c) => ESCAPES[c]!).replace(/\r\n|\r|\n/g, '\\.br\\');
}

export function buildWithMedplum(layout: Layout): string {
  const segments = layout.map(({ name, fields }) => {
    const built: Hl7Field[] = [new Hl7Field([[name]])];
    fields.forEach((field, i) => {
      if (name === 'MSH' && i === 0) {
        built.push(Hl7Field.parse(field[0]![0]![0]!));
        return;
      }
      built.push(new Hl7Field(field.map((rep) => rep.map((comp) => comp.map(medplumEscape).join('&')))));
    });
    return new MedplumSegment(built);
  });
  return new MedplumMessage(segments).toString() + '\r';
}

export function buildWithHl7v2(layout: Layout): string {
  const message = new Hl7v2Message('2.5.1' as never);
  for (const { name, fields } of layout) {
    let segment;
    if (name === 'MSH') {
      segment = message.header;
      segment.clear();
    } else {
      segment = message.addSegment(name);
    }
    fields.forEach((field, i) => {
      if (name === 'MSH' && i === 0) return; // written by the library from its separators
      const position = i + 1 + (name === 'MSH' ? 1 : 0);
      if (field.length === 1 && field[0]!.length === 1 && field[0]![0]!.length === 1 && field[0]![0]![0] === '') return;
      const target = segment.field(position);
      field.forEach((rep, r) => {
        const repetition = target.repetition(r);
        rep.forEach((comp, c) => {
          comp.forEach((sub, s) => {
            if (sub === '') return;
            if (comp.length === 1) repetition.setValue(sub, c + 1);
            else repetition.setValue(sub, c + 1, s + 1);
          });
        });
      });
    });
  }
  return message.toHL7String() + '\r';
}

let sink = 0;

function runFor(build: () => string, ms: number, batch: number): { count: number; elapsedMs: number } {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(ms * 1e6));
  let count = 0;
  let now: bigint;
  do {
    for (let i = 0; i < batch; i++) sink += build().length;
    count += batch;
    now = process.hrtime.bigint();
  } while (now < deadline);
  return { count, elapsedMs: Number(now - start) / 1e6 };
}

function firstDifference(a: string, b: string): string {
  const segA = a.split('\r');
  const segB = b.split('\r');
  const diffs: string[] = [];
  for (let i = 0; i < Math.max(segA.length, segB.length) && diffs.length < 3; i++) {
    if (segA[i] !== segB[i]) diffs.push(`ours ${JSON.stringify((segA[i] ?? '').slice(0, 90))} vs ${JSON.stringify((segB[i] ?? '').slice(0, 90))}`);
  }
  const count = segA.filter((s, i) => s !== segB[i]).length;
  if (count === 0) {
    // the same segments: the messages differ only after the last one (e.g. a terminator)
    return `the same segments; the message ends ${JSON.stringify(b.slice(a.length))} after ours`;
  }
  return `${count} of ${segA.length - 1} segments differ; first: ${diffs.join(' | ')}`;
}

function assertExpected(message: string, output: string, expected: string, when: string): void {
  if (output !== expected) {
    throw new Error(`${message}: our bundled output differs from the expected output ${when} (${firstDifference(expected, output)})`);
  }
}

function measureMessage(message: string, description: string, ours: () => string, expected: string, job: ChildJob): MessageResult {
  const reference = ours();
  assertExpected(message, reference, expected, 'before timing');
  const layout = layoutOf(reference);
  const candidates = [
    { name: 'lib/hl7 (ours)', build: ours },
    { name: '@medplum/core Hl7Message', build: () => buildWithMedplum(layout) },
    { name: 'hl7v2 1.8.0 HL7Message', build: () => buildWithHl7v2(layout) },
  ];
  const outputs = candidates.map((c) => c.build());
  // warm-up (JIT) for every candidate before any timing
  for (const c of candidates) runFor(c.build, job.warmupMs, job.batch);
  const rates = candidates.map(() => [] as number[]);
  for (let r = 0; r < job.rounds; r++) {
    // interleaved rounds, rotating the order, so drift hits every candidate alike
    for (let k = 0; k < candidates.length; k++) {
      const idx = (k + r) % candidates.length;
      const { count, elapsedMs } = runFor(candidates[idx]!.build, job.roundMs, job.batch);
      rates[idx]!.push((count / elapsedMs) * 1000);
    }
  }
  // the code that was timed still writes the expected bytes (after the JIT has optimised it)
  assertExpected(message, ours(), expected, 'after timing');
  const results: CandidateResult[] = candidates.map((c, i) => {
    const identical = outputs[i] === reference;
    return {
      name: c.name,
      messagesPerSecond: Math.round(median(rates[i]!)),
      rounds: rates[i]!.map((v) => Math.round(v)),
      bytes: Buffer.byteLength(outputs[i]!, 'utf8'),
      identicalToOurs: i === 0 ? null : identical,
      ...(i === 0 || identical ? {} : { differences: firstDifference(reference, outputs[i]!) }),
    };
  });
  const peers = results.slice(1);
  const fastest = peers.reduce((a, b) => (b.messagesPerSecond > a.messagesPerSecond ? b : a));
  return {
    message,
    description,
    segments: reference.split('\r').length - 1,
    bytes: Buffer.byteLength(reference, 'utf8'),
    candidates: results,
    oursVsFastestPeer: round(results[0]!.messagesPerSecond / fastest.messagesPerSecond, 2),
    fastestPeer: fastest.name,
    oursEqualsExpected: true,
  };
}

function measure(job: ChildJob): MessageResult[] {
  const note = noteInput();
  const summary = summaryInput(200);
  const messages = [
    measureMessage(
      'note (MDM^T02)',
      'test/hl7/chart-fixtures.ts note with its encounter; text with | ^ & ~ \\ and 3 line breaks',
      () => encodeNoteMessage(note),
      readFileSync(job.expectedNoteFile, 'utf8'),
      job,
    ),
    measureMessage(
      'summary, 200 records (ORU^R01)',
      '150 chart records (notes, assessments, encounters from the fixtures, distinct ids/times) + 50 lab results, full demographics',
      () => encodePatientSummaryMessage(summary),
      readFileSync(job.expectedSummaryFile, 'utf8'),
      job,
    ),
  ];
  if (sink === -1) console.log(sink); // keeps the work observable
  return messages;
}

/** A CPU profile (100 µs sampling) of our encoder building the 200-record summary, after a warm-up. */
async function profile(job: ChildJob): Promise<CpuProfile> {
  const input = summaryInput(200);
  const build = (): string => encodePatientSummaryMessage(input);
  assertExpected('summary, 200 records (ORU^R01)', build(), readFileSync(job.expectedSummaryFile, 'utf8'), 'before profiling');
  runFor(build, job.warmupMs, job.batch);
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    runFor(build, job.profileMs, job.batch);
    const { profile: result } = (await session.post('Profiler.stop')) as unknown as { profile: CpuProfile };
    return result;
  } finally {
    session.disconnect();
  }
}

/** The child's whole run: the job named by argv[2], one `BENCH_RESULT` line on stdout. */
export async function runChild(jobFile: string): Promise<void> {
  const job = JSON.parse(readFileSync(jobFile, 'utf8')) as ChildJob;
  const output: ChildOutput =
    job.mode === 'profile' ? { mode: 'profile', profile: await profile(job) } : { mode: 'measure', messages: measure(job), node: process.version };
  process.stdout.write(`BENCH_RESULT ${JSON.stringify(output)}\n`);
}
