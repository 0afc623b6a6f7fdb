/**
 * Measurement 2: warm latency per endpoint against the local stack, beside its I/O floor.
 *
 * Per endpoint: a warm-up, a traced sample (the calls of a steady-state request -> the floor
 * template and the call counts), then interleaved blocks of requests (authorizer + handler,
 * in process, bench/invoke.ts) and floor replays (bench/floor.ts), and finally a cross-check with
 * the real dispatch() of lib/local/api-gateway.ts.
 */
import { dispatch } from '../lib/local/api-gateway';
import { CallRecorder, summarizeCalls, type CallRecord, type PathCalls } from './aws-calls';
import { authorizerEvent, proxyEvent, urlOf } from './fixtures';
import { describeFloor, floorTemplate, type FloorReplayer } from './floor';
import { invoke } from './invoke';
import type { Scenario } from './scenarios';
import { round, roundSummary, summarize, type Summary } from './stats';

export interface Pair {
  handler: Summary;
  floor: Summary;
  p50Ratio: number;
  p99Ratio: number;
}

export interface LatencyResult {
  endpoint: string;
  path: string;
  requests: number;
  floorRuns: number;
  /** authorizer + endpoint handler, against all their calls */
  endToEnd: Pair;
  authorizer: Pair;
  handler: Pair;
  dispatch: { n: number; p50: number; p99: number };
  floorCalls: string;
  floorCallCount: number;
  floorErrors: string[];
  nonOkResponses: Record<string, number>;
  /** mean of per-request durations rounded up to 1 ms (Lambda billing) */
  billedMs: { handler: number; authorizer: number };
  /** SDK calls per request during the timed requests (both functions), by service.operation */
  callsPerRequest: Record<string, number>;
  logBytesPerRequest: number;
  traced: PathCalls;
}

export interface LatencyOptions {
  requests: number;
  floorRuns: number;
  warmup: number;
  blocks: number;
  dispatchRuns: number;
  traceSamples: number;
  logBytes: () => number;
  progress: (line: string) => void;
}

function pair(handler: number[], floor: number[]): Pair {
  const h = summarize(handler);
  const f = summarize(floor);
  return { handler: roundSummary(h), floor: roundSummary(f), p50Ratio: round(h.p50 / f.p50, 3), p99Ratio: round(h.p99 / f.p99, 3) };
}

/** The call signature of a request (which calls, in which phase, in order). */
function signature(calls: CallRecord[]): string {
  return calls.map((c) => `${c.phase}:${c.service}.${c.op}`).join(',');
}

export async function measureEndpoint(scenario: Scenario, recorder: CallRecorder, replayer: FloorReplayer, options: LatencyOptions): Promise<LatencyResult> {
  const name = scenario.endpoint.name;
  const nonOk: Record<string, number> = {};
  const check = (status: number) => {
    if (!scenario.okStatus.includes(status)) nonOk[String(status)] = (nonOk[String(status)] ?? 0) + 1;
  };
  let n = 0;

  for (let i = 0; i < options.warmup; i++) check((await invoke(scenario, scenario.request(n++), recorder)).status);

  // traced sample: the most frequent call signature is the steady state; its last request is the template
  recorder.tracing = true;
  const samples: Array<{ calls: CallRecord[]; status: number }> = [];
  for (let i = 0; i < options.traceSamples; i++) {
    const { value, calls } = await recorder.capture(() => invoke(scenario, scenario.request(n++), recorder));
    check(value.status);
    samples.push({ calls, status: value.status });
  }
  recorder.endTracing();
  const bySig = new Map<string, number>();
  for (const s of samples) bySig.set(signature(s.calls), (bySig.get(signature(s.calls)) ?? 0) + 1);
  const steadySig = [...bySig].sort((a, b) => b[1] - a[1])[0]![0];
  const steady = [...samples].reverse().find((s) => signature(s.calls) === steadySig)!;
  const template = floorTemplate(steady.calls);
  const traced = summarizeCalls(name, scenario.path, steady.status, steady.calls);

  // timed, interleaved
  const total: number[] = [];
  const auth: number[] = [];
  const handler: number[] = [];
  const fTotal: number[] = [];
  const fAuth: number[] = [];
  const fHandler: number[] = [];
  const floorErrors = new Set<string>();
  let floorIteration = 0;
  const before = recorder.snapshot();
  let logBytes = 0;
  for (let b = 0; b < options.blocks; b++) {
    const logStart = options.logBytes();
    const count = Math.ceil(options.requests / options.blocks);
    for (let i = 0; i < count && total.length < options.requests; i++) {
      const r = await invoke(scenario, scenario.request(n++), recorder);
      check(r.status);
      total.push(r.totalMs);
      auth.push(r.authorizerMs);
      handler.push(r.handlerMs);
    }
    logBytes += options.logBytes() - logStart;
    const floorCount = Math.ceil(options.floorRuns / options.blocks);
    for (let i = 0; i < floorCount && fTotal.length < options.floorRuns; i++) {
      const r = await replayer.run(template, floorIteration++);
      for (const e of r.errors) floorErrors.add(e);
      fTotal.push(r.totalMs);
      fAuth.push(r.authorizerMs);
      fHandler.push(r.handlerMs);
    }
  }
  const calls = CallRecorder.diff(before, recorder.snapshot());
  const callsPerRequest = Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, round(v / total.length, 4)]));

  // cross-check with the real gateway emulation
  const dispatched: number[] = [];
  for (let i = 0; i < options.dispatchRuns; i++) {
    const spec = scenario.request(n++);
    const event = proxyEvent(scenario.endpoint, spec, scenario.key.secret);
    const headers = Object.entries(authorizerEvent(event).headers ?? {}) as Array<[string, string]>;
    const t = process.hrtime.bigint();
    const result = await dispatch({
      method: scenario.endpoint.method,
      url: urlOf(scenario.endpoint, spec),
      headers,
      body: spec.body !== undefined ? Buffer.from(spec.body) : undefined,
      sourceIp: '127.0.0.1',
    });
    dispatched.push(Number(process.hrtime.bigint() - t) / 1e6);
    check(result.statusCode);
  }
  const d = summarize(dispatched);

  const result: LatencyResult = {
    endpoint: name,
    path: scenario.path,
    requests: total.length,
    floorRuns: fTotal.length,
    endToEnd: pair(total, fTotal),
    authorizer: pair(auth, fAuth),
    handler: pair(handler, fHandler),
    dispatch: { n: dispatched.length, p50: round(d.p50), p99: round(d.p99) },
    floorCalls: describeFloor(template),
    floorCallCount: template.length,
    floorErrors: [...floorErrors],
    nonOkResponses: nonOk,
    billedMs: {
      handler: round(handler.reduce((s, v) => s + Math.ceil(v), 0) / handler.length, 3),
      authorizer: round(auth.reduce((s, v) => s + Math.ceil(v), 0) / auth.length, 3),
    },
    callsPerRequest,
    logBytesPerRequest: Math.round(logBytes / total.length),
    traced,
  };
  options.progress(
    `  ${name}: p50 ${result.endToEnd.handler.p50.toFixed(2)} ms (floor ${result.endToEnd.floor.p50.toFixed(2)} ms, ${result.endToEnd.p50Ratio}x), p99 ${result.endToEnd.handler.p99.toFixed(2)} ms (floor ${result.endToEnd.floor.p99.toFixed(2)} ms); handler alone ${result.handler.handler.p50.toFixed(2)} vs ${result.handler.floor.p50.toFixed(2)} ms; dispatch() p50 ${result.dispatch.p50.toFixed(2)} ms` +
      (Object.keys(nonOk).length ? `; NON-OK ${JSON.stringify(nonOk)}` : '') +
      (floorErrors.size ? `; floor errors ${[...floorErrors].join(', ')}` : ''),
  );
  return result;
}
