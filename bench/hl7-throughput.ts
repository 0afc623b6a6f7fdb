/**
 * Measurement 4: HL7 encoder throughput (messages/s, build + serialise, escaping included) of
 * lib/hl7 beside @medplum/core Hl7Message and hl7v2 1.8.0, measured on the BUNDLED code, as the
 * Lambda runs it: bench/hl7-throughput-child.ts (the inputs, our encoder and both peers) is bundled
 * with esbuild with the Lambda settings (scripts/build.ts LAMBDA_BUNDLE_OPTIONS: one minified,
 * tree-shaken ESM file, target node24) into a temporary directory and run by plain `node` in a
 * child process (no tsx, no on-the-fly TypeScript), which returns its figures as JSON.
 *
 * Inputs: the note message of test/hl7/chart-fixtures.ts (its text contains | ^ & ~ \ and line
 * breaks) and the largest patient summary (200 records: 150 chart records + 50 lab results).
 *
 * What each candidate does per message:
 *   lib/hl7   encodeNoteMessage / encodePatientSummaryMessage from the DOMAIN objects: mapping
 *             (dates, names, codes), validation, escaping, segment objects, serialisation. No cache
 *             carries work from one message to the next (each message formats its own time stamps).
 *   peers     build the same message from a prepared layout (segments -> fields -> repetitions ->
 *             components -> subcomponents of UNESCAPED values, taken once from our output), i.e.
 *             escaping + the library's object model + serialisation. They skip the domain mapping
 *             ours pays for, which favours them.
 *   @medplum/core does not escape on output; the bench escapes each value with a minimal escape
 *   function (delimiters, line break -> \.br\) as any user of it must.
 *   hl7v2 escapes itself (line breaks become \X0A\) and types fields by its 2.5.1 dictionary
 *   (it rewrites TS values, e.g. drops seconds), so its bytes differ; the differences are reported.
 * Our output is compared byte for byte, inside the child, before and after the timed rounds, with the
 * expected output: the reviewed fixture test/hl7/fixtures/mdm-t02-note.hl7 for the note, and for the
 * summary what the source encoder (this process) writes for the same input.
 * `node-hl7-client` is not installed: not measured.
 */
import { buildSync } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { encodePatientSummaryMessage } from '../lib/hl7';
import { LAMBDA_BUNDLE_OPTIONS } from '../scripts/build';
import { loadFixture } from '../test/hl7/fixtures';
import type { ChildJob, ChildOutput, CpuProfile } from './hl7-throughput-child';
import { summaryInput } from './hl7-throughput-inputs';
import { round } from './stats';

export interface CandidateResult {
  name: string;
  messagesPerSecond: number;
  /** each round's rate, for the spread */
  rounds: number[];
  bytes: number;
  identicalToOurs: boolean | null;
  differences?: string;
}

export interface MessageResult {
  message: string;
  description: string;
  segments: number;
  bytes: number;
  candidates: CandidateResult[];
  oursVsFastestPeer: number;
  fastestPeer: string;
  /** our bundled output equalled the expected output before and after the timed rounds (else the run fails) */
  oursEqualsExpected?: boolean;
}

export interface Hl7Result {
  messages: MessageResult[];
  notMeasured: string[];
  method: string;
  /** where lib/hl7 spends its time on the 200-record summary (CPU profile, self time) */
  profile?: Array<{ fn: string; selfPercent: number }>;
}

const ROOT = path.resolve(__dirname, '..');
const BUNDLE_NAME = 'hl7-throughput.mjs';
/** The settings that differ from the deployed bundle's, by purpose (none for the timed bundle). */
const BUNDLE_FORMAT = `esbuild ${LAMBDA_BUNDLE_OPTIONS.format.toUpperCase()}, minified, target ${LAMBDA_BUNDLE_OPTIONS.target} (scripts/build.ts LAMBDA_BUNDLE_OPTIONS)`;

/** A bundle of the child (its inputs, lib/hl7, @medplum/core, hl7v2) in a new temporary directory. */
export function bundleChild(options: { keepNames?: boolean } = {}): { dir: string; bundle: string } {
  const dir = mkdtempSync(path.join(tmpdir(), 'hl7-throughput-'));
  const bundle = path.join(dir, BUNDLE_NAME);
  buildSync({
    ...LAMBDA_BUNDLE_OPTIONS,
    // the profile keeps the functions' names (whitespace and syntax still minified); the source map maps them to files
    ...(options.keepNames ? { minify: false, minifyWhitespace: true, minifySyntax: true } : {}),
    absWorkingDir: ROOT,
    stdin: {
      contents: "import { runChild } from './hl7-throughput-child';\nawait runChild(process.argv[2]!);\n",
      resolveDir: __dirname,
      sourcefile: 'hl7-throughput-entry.ts',
      loader: 'ts',
    },
    outfile: bundle,
  });
  return { dir, bundle };
}

/** Runs a job in the bundled child (plain node, source maps enabled as deployed) and returns its output. */
function runBundled(bundle: string, dir: string, job: Omit<ChildJob, 'expectedNoteFile' | 'expectedSummaryFile'>, expectedNote?: string): ChildOutput {
  const expectedNoteFile = path.join(dir, 'expected-note.hl7');
  const expectedSummaryFile = path.join(dir, 'expected-summary.hl7');
  writeFileSync(expectedNoteFile, expectedNote ?? loadFixture('mdm-t02-note'));
  writeFileSync(expectedSummaryFile, encodePatientSummaryMessage(summaryInput(200)));
  const jobFile = path.join(dir, 'job.json');
  writeFileSync(jobFile, JSON.stringify({ ...job, expectedNoteFile, expectedSummaryFile } satisfies ChildJob));
  let stdout: string;
  try {
    stdout = execFileSync(process.execPath, ['--enable-source-maps', bundle, jobFile], {
      cwd: dir,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      maxBuffer: 256 * 1024 * 1024,
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'production' },
    });
  } catch (error) {
    // the child's own error line (e.g. our output differing from the expected), not the command line
    const stderr = String((error as { stderr?: unknown }).stderr ?? '');
    const reason = stderr.split('\n').find((l) => /^\w*Error: /.test(l)) ?? stderr.slice(0, 500);
    throw new Error(`the bundled HL7 bench failed: ${reason}`, { cause: error });
  }
  const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
  if (!line) throw new Error(`the bundled HL7 bench printed no result: ${stdout.slice(0, 500)}`);
  return JSON.parse(line.slice('BENCH_RESULT '.length)) as ChildOutput;
}

export interface Hl7ThroughputOptions {
  roundMs: number;
  rounds: number;
  progress: (line: string) => void;
  /** warm-up per candidate before any timing; default max(150, roundMs / 2) */
  warmupMs?: number;
  /** messages built between two reads of the clock; default 20 */
  batch?: number;
  /** for the harness's own test: the expected note instead of the reviewed fixture */
  expectedNote?: string;
}

export function measureHl7Throughput(options: Hl7ThroughputOptions): Hl7Result {
  const warmupMs = options.warmupMs ?? Math.max(150, options.roundMs / 2);
  const { dir, bundle } = bundleChild();
  let output: ChildOutput;
  try {
    const job = { mode: 'measure' as const, roundMs: options.roundMs, rounds: options.rounds, warmupMs, batch: options.batch ?? 20, profileMs: 0 };
    output = runBundled(bundle, dir, job, options.expectedNote);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  if (output.mode !== 'measure') throw new Error('the bundled HL7 bench answered another job');
  for (const result of output.messages) {
    options.progress(
      `  ${result.message}: ` +
        result.candidates.map((r) => `${r.name} ${r.messagesPerSecond.toLocaleString('en-US')}/s`).join(', ') +
        ` -> ours ${result.oursVsFastestPeer}x the fastest peer`,
    );
  }
  return {
    messages: output.messages,
    notMeasured: ['node-hl7-client: not installed (not in package.json); skipped'],
    method:
      `the bundled code under plain node: our encoder, both peers and the inputs bundled by ${BUNDLE_FORMAT}, run by node ${output.node} ` +
      `in a child process (no tsx); median of ${options.rounds} interleaved rounds of ${options.roundMs} ms per candidate after a warm-up of ${warmupMs} ms; single thread; ` +
      'our output byte-compared before and after the timed rounds with the expected output (note: test/hl7/fixtures/mdm-t02-note.hl7; summary: the source encoder’s output); ' +
      'no cache carries work from one message to the next',
  };
}

/** Self time by function of a profile taken in the bundled child, functions named by their source file (source map). */
export function selfTimeByFunction(profile: CpuProfile, map: SourceMap, top = 10): Array<{ fn: string; selfPercent: number }> {
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  // count only samples inside the measured loop (plus GC), not the profiler's own frames
  const inLoop = new Map<number, boolean>();
  const measured = (id: number): boolean => {
    const known = inLoop.get(id);
    if (known !== undefined) return known;
    const node = byId.get(id);
    const value = !node
      ? false
      : node.callFrame.functionName === 'runFor' || node.callFrame.functionName === '(garbage collector)' || (parent.has(id) && measured(parent.get(id)!));
    inLoop.set(id, value);
    return value;
  };
  const self = new Map<string, number>();
  let total = 0;
  profile.samples.forEach((id, i) => {
    const node = byId.get(id);
    const delta = profile.timeDeltas[i] ?? 0;
    if (!node || !measured(id)) return;
    const { functionName, url, lineNumber, columnNumber } = node.callFrame;
    let file = '';
    if (url.endsWith(BUNDLE_NAME) && lineNumber >= 0) {
      const entry = map.findEntry(lineNumber, columnNumber) as { originalSource?: string };
      if (entry.originalSource) file = entry.originalSource.split('/').slice(-2).join('/');
    }
    const key = `${functionName || '(anonymous)'}${file ? ` ${file}` : ''}`;
    self.set(key, (self.get(key) ?? 0) + delta);
    total += delta;
  });
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)
    .map(([fn, t]) => ({ fn, selfPercent: round((t / total) * 100, 1) }));
}

/** A short CPU profile of lib/hl7 building the 200-record summary, in the bundled child: self time by function. */
export async function profileOurs(ms: number): Promise<Array<{ fn: string; selfPercent: number }>> {
  const { dir, bundle } = bundleChild({ keepNames: true });
  try {
    const output = runBundled(bundle, dir, { mode: 'profile', roundMs: 0, rounds: 0, warmupMs: Math.max(150, ms / 4), batch: 20, profileMs: ms });
    if (output.mode !== 'profile') throw new Error('the bundled HL7 bench answered another job');
    const map = new SourceMap(JSON.parse(readFileSync(`${bundle}.map`, 'utf8')));
    return selfTimeByFunction(output.profile, map);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * `npx tsx bench/hl7-throughput.ts [runs]`: measurement 4 alone, with the full bench's rounds (5 of
 * 400 ms), `runs` times (default 3), each run a fresh bundle and child; prints each run's ratios to
 * @medplum/core and their medians.
 */
async function main(runs: number): Promise<void> {
  const ratios: number[][] = [];
  for (let run = 1; run <= runs; run++) {
    const result = measureHl7Throughput({ roundMs: 400, rounds: 5, progress: (line) => console.log(line) });
    const vsMedplum = result.messages.map((m) => m.candidates[0]!.messagesPerSecond / m.candidates[1]!.messagesPerSecond);
    ratios.push(vsMedplum);
    console.log(`run ${run}: ours ÷ @medplum/core: ${result.messages.map((m, i) => `${m.message} ${vsMedplum[i]!.toFixed(2)}x`).join(', ')}`);
    if (run === 1) console.log(`method: ${result.method}`);
  }
  const medians = ratios[0]!.map((_, i) => [...ratios.map((r) => r[i]!)].sort((a, b) => a - b)[Math.floor(runs / 2)]!);
  console.log(`median of ${runs} runs, ours ÷ @medplum/core: note ${medians[0]!.toFixed(2)}x, summary ${medians[1]!.toFixed(2)}x`);
  console.log('profile (summary, self time):', (await profileOurs(1000)).map((p) => `${p.fn} ${p.selfPercent}%`).join(', '));
}

if (require.main === module) {
  main(Number(process.argv[2] ?? 3)).catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
