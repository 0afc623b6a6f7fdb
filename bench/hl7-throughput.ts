/**
 * Measurement 4: HL7 encoder throughput (messages/s, build + serialise, escaping included) of
 * lib/hl7 beside @medplum/core Hl7Message and hl7v2 1.8.0, in the same process.
 *
 * Inputs: the note message of test/hl7/chart-fixtures.ts (its text contains | ^ & ~ \ and line
 * breaks) and the largest patient summary (200 records: 150 chart records + 50 lab results).
 *
 * What each candidate does per message:
 *   lib/hl7   encodeNoteMessage / encodePatientSummaryMessage from the DOMAIN objects: mapping
 *             (dates, names, codes), validation, escaping, segment objects, serialisation.
 *   peers     build the same message from a prepared layout (segments -> fields -> repetitions ->
 *             components -> subcomponents of UNESCAPED values, taken once from our output), i.e.
 *             escaping + the library's object model + serialisation. They skip the domain mapping
 *             ours pays for, which favours them.
 *   @medplum/core does not escape on output; the bench escapes each value with a minimal escape
 *   function (delimiters, line break -> \.br\) as any user of it must.
 *   hl7v2 escapes itself (line breaks become \X0A\) and types fields by its 2.5.1 dictionary
 *   (it rewrites TS values, e.g. drops seconds), so its bytes differ; the differences are reported.
 * `node-hl7-client` is not installed: not measured.
 */
import { Hl7Field, Hl7Message as MedplumMessage, Hl7Segment as MedplumSegment } from '@medplum/core';
import type * as Hl7v2Module from 'hl7v2';
import type { Assessment, ChartRecord, Encounter, Note } from '../lib/chart/types';
import { encodeNoteMessage, encodePatientSummaryMessage, type LabResultSummary } from '../lib/hl7';
import * as fx from '../test/hl7/chart-fixtures';
import { Session } from 'node:inspector/promises';
import { median, round } from './stats';

// hl7v2 ships ESM only; Node >= 20.19 loads it with require (as test/hl7/parsers.ts does).
const requireNative = process.getBuiltinModule('node:module').createRequire(__filename);

/** segment -> fields (index 0 = field 1; MSH: index 0 = MSH-2) -> repetitions -> components -> subcomponents */
type Layout = Array<{ name: string; fields: string[][][][] }>;

const UNESCAPES: Record<string, string> = { F: '|', S: '^', T: '&', R: '~', E: '\\', '.br': '\n' };

function unescapeLeaf(text: string): string {
  return text.replace(/\\([^\\]*)\\/g, (whole, body: string) => UNESCAPES[body] ?? whole);
}

/** Our message as a layout of raw (unescaped) values. */
export function layoutOf(message: string): Layout {
  return message
    .split('\r')
    .filter((s) => s !== '')
    .map((segment) => {
      const parts = segment.split('|');
      const name = parts[0]!;
      const fields = parts.slice(1).map((field, i) => {
        if (name === 'MSH' && i === 0) return [[[field]]]; // MSH-2, the encoding characters, as is
        return field.split('~').map((rep) => rep.split('^').map((comp) => comp.split('&').map(unescapeLeaf)));
      });
      return { name, fields };
    });
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

let hl7v2: typeof Hl7v2Module | undefined;
function hl7v2Module(): typeof Hl7v2Module {
  hl7v2 ??= requireNative('hl7v2') as typeof Hl7v2Module;
  return hl7v2;
}

export function buildWithHl7v2(layout: Layout): string {
  const { HL7Message } = hl7v2Module();
  const message = new HL7Message('2.5.1' as never);
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

// ---------------------------------------------------------------- inputs

function summaryInput(total: number): Parameters<typeof encodePatientSummaryMessage>[0] {
  const records: ChartRecord[] = [];
  const labResults: LabResultSummary[] = [];
  const labCount = Math.floor(total / 4);
  const base = Date.parse('2024-04-30T17:00:00Z');
  for (let i = 0; i < total - labCount; i++) {
    const at = new Date(base - i * 3_600_000 * 7).toISOString();
    switch (i % 3) {
      case 0: {
        const note: Note = { ...fx.note, noteId: `note-${i}`, createdAt: at, encounterId: undefined };
        records.push({ kind: 'note', at, record: note });
        break;
      }
      case 1: {
        const assessment: Assessment = { ...fx.assessment, assessmentId: `asm-${i}`, performedAt: at, encounterId: undefined };
        records.push({ kind: 'assessment', at, record: assessment });
        break;
      }
      default: {
        const encounter: Encounter = { ...fx.encounter, encounterId: `enc-${i}`, admitAt: at, dischargeAt: undefined };
        records.push({ kind: 'encounter', at, record: encounter });
      }
    }
  }
  for (let i = 0; i < labCount; i++) {
    labResults.push({
      ...fx.labResult,
      resultId: `res-${i}`,
      accessionNumber: `ACC-${i}`,
      resultedAt: new Date(base - i * 3_600_000 * 29 - 1_800_000).toISOString(),
    });
  }
  return { header: fx.header, patient: fx.patient, records, labResults };
}

// ---------------------------------------------------------------- measurement

export interface Candidate {
  name: string;
  build: () => string;
}

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
}

export interface Hl7Result {
  messages: MessageResult[];
  notMeasured: string[];
  method: string;
  /** where lib/hl7 spends its time on the 200-record summary (CPU profile, self time) */
  profile?: Array<{ fn: string; selfPercent: number }>;
}

let sink = 0;

function runFor(build: () => string, ms: number): { count: number; elapsedMs: number } {
  const start = process.hrtime.bigint();
  const deadline = start + BigInt(Math.round(ms * 1e6));
  let count = 0;
  let now: bigint;
  do {
    for (let i = 0; i < 20; i++) sink += build().length;
    count += 20;
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
  return `${count} of ${segA.length - 1} segments differ; first: ${diffs.join(' | ')}`;
}

function measureMessage(
  message: string,
  description: string,
  ours: () => string,
  roundMs: number,
  rounds: number,
  progress: (line: string) => void,
): MessageResult {
  const reference = ours();
  const layout = layoutOf(reference);
  const candidates: Candidate[] = [
    { name: 'lib/hl7 (ours)', build: ours },
    { name: '@medplum/core Hl7Message', build: () => buildWithMedplum(layout) },
    { name: 'hl7v2 1.8.0 HL7Message', build: () => buildWithHl7v2(layout) },
  ];
  const outputs = candidates.map((c) => c.build());
  // warm-up (JIT) for every candidate before any timing
  for (const c of candidates) runFor(c.build, Math.max(150, roundMs / 2));
  const rates = candidates.map(() => [] as number[]);
  for (let r = 0; r < rounds; r++) {
    // interleaved rounds, rotating the order, so drift hits every candidate alike
    for (let k = 0; k < candidates.length; k++) {
      const idx = (k + r) % candidates.length;
      const { count, elapsedMs } = runFor(candidates[idx]!.build, roundMs);
      rates[idx]!.push((count / elapsedMs) * 1000);
    }
  }
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
  const result: MessageResult = {
    message,
    description,
    segments: reference.split('\r').length - 1,
    bytes: Buffer.byteLength(reference, 'utf8'),
    candidates: results,
    oursVsFastestPeer: round(results[0]!.messagesPerSecond / fastest.messagesPerSecond, 2),
    fastestPeer: fastest.name,
  };
  progress(
    `  ${message}: ` +
      results.map((r) => `${r.name} ${r.messagesPerSecond.toLocaleString('en-US')}/s`).join(', ') +
      ` -> ours ${result.oursVsFastestPeer}x the fastest peer`,
  );
  return result;
}

export function measureHl7Throughput(options: { roundMs: number; rounds: number; progress: (line: string) => void }): Hl7Result {
  const noteInput = { header: fx.header, patient: fx.patient, note: fx.note, encounter: fx.encounter };
  const summary = summaryInput(200);
  const messages = [
    measureMessage(
      'note (MDM^T02)',
      'test/hl7/chart-fixtures.ts note with its encounter; text with | ^ & ~ \\ and 3 line breaks',
      () => encodeNoteMessage(noteInput),
      options.roundMs,
      options.rounds,
      options.progress,
    ),
    measureMessage(
      'summary, 200 records (ORU^R01)',
      '150 chart records (notes, assessments, encounters from the fixtures, distinct ids/times) + 50 lab results, full demographics',
      () => encodePatientSummaryMessage(summary),
      options.roundMs,
      options.rounds,
      options.progress,
    ),
  ];
  if (sink === -1) console.log(sink); // keeps the work observable
  return {
    messages,
    notMeasured: ['node-hl7-client: not installed (not in package.json); skipped'],
    method: `median of ${options.rounds} interleaved rounds of ${options.roundMs} ms per candidate after a warm-up; single thread; same process`,
  };
}

interface ProfileNode {
  id: number;
  children?: number[];
  callFrame: { functionName: string; url: string; lineNumber: number };
}

/** A short CPU profile of lib/hl7 building the 200-record summary: self time by function. */
export async function profileOurs(ms: number): Promise<Array<{ fn: string; selfPercent: number }>> {
  const input = summaryInput(200);
  const session = new Session();
  session.connect();
  try {
    await session.post('Profiler.enable');
    await session.post('Profiler.setSamplingInterval', { interval: 100 });
    await session.post('Profiler.start');
    runFor(() => encodePatientSummaryMessage(input), ms);
    const { profile } = (await session.post('Profiler.stop')) as unknown as { profile: { nodes: ProfileNode[]; samples: number[]; timeDeltas: number[] } };
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
      const file = node.callFrame.url.split('/').slice(-2).join('/');
      const key = `${node.callFrame.functionName || '(anonymous)'}${file ? ` ${file}` : ''}`;
      self.set(key, (self.get(key) ?? 0) + delta);
      total += delta;
    });
    return [...self]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 10)
      .map(([fn, t]) => ({ fn, selfPercent: round((t / total) * 100, 1) }));
  } finally {
    session.disconnect();
  }
}
