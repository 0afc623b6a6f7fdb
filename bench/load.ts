/**
 * Measurement 5: throughput of the local API (HTTP on loopback, the API Gateway emulation with the
 * real authorizer and handlers) under a bounded closed-loop load: concurrency 16 over keep-alive
 * connections for a fixed duration, from a separate Node process (bench/load-client.mjs).
 * The whole local stack (gateway, dynalite, fauxqs, KMS) shares one Node process and event loop,
 * so this is the throughput of the local stack on this machine, not of AWS.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { CallRecorder } from './aws-calls';
import { urlOf } from './fixtures';
import type { Scenario } from './scenarios';
import { round, roundSummary, summarize, type Summary } from './stats';

export interface LoadResult {
  endpoint: string;
  path: string;
  concurrency: number;
  durationS: number;
  requests: number;
  requestsPerSecond: number;
  latencyMs: Summary;
  statuses: Record<string, number>;
  errors: number;
  /** SDK calls per request made by the functions during the run, by service.operation */
  callsPerRequest: Record<string, number>;
}

const TOKEN = '__BENCH_UNIQUE__';

export async function measureLoad(
  root: string,
  apiUrl: string,
  scenario: Scenario,
  recorder: CallRecorder,
  options: { concurrency: number; durationMs: number; warmupMs: number; progress: (line: string) => void },
): Promise<LoadResult> {
  const spec = scenario.request(0);
  // stored bodies must be unique per request: the load client substitutes TOKEN
  const body = spec.body?.replace(/"(BENCH-|bench-)[^"]*"/g, `"$1${TOKEN}"`);
  const child = {
    url: apiUrl + urlOf(scenario.endpoint, spec),
    method: scenario.endpoint.method,
    headers: { 'x-api-key': scenario.key.secret, ...(body !== undefined ? { 'content-type': 'application/json' } : {}) },
    body,
    uniqueToken: body?.includes(TOKEN) ? TOKEN : undefined,
    concurrency: options.concurrency,
    durationMs: options.durationMs,
    warmupMs: options.warmupMs,
  };
  const before = recorder.snapshot();
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(
      process.execPath,
      [path.join(root, 'bench', 'load-client.mjs'), JSON.stringify(child)],
      { maxBuffer: 256 * 1024 * 1024, timeout: options.durationMs + options.warmupMs + 60_000 },
      (error, out, err) => {
        if (error) reject(new Error(`load client failed: ${error.message} ${err.slice(0, 300)}`));
        else resolve(out);
      },
    );
  });
  const calls = CallRecorder.diff(before, recorder.snapshot());
  const line = stdout.split('\n').find((l) => l.startsWith('LOAD_RESULT '));
  if (!line) throw new Error('load client printed no result');
  const raw = JSON.parse(line.slice('LOAD_RESULT '.length)) as {
    requests: number;
    durationMs: number;
    latenciesMs: number[];
    statuses: Record<string, number>;
    errors: number;
    warmupRequests: number;
  };
  // the call counters also saw the warm-up requests
  const served = raw.requests + raw.warmupRequests;
  const result: LoadResult = {
    endpoint: scenario.endpoint.name,
    path: scenario.path,
    concurrency: options.concurrency,
    durationS: round(raw.durationMs / 1000, 2),
    requests: raw.requests,
    requestsPerSecond: round(raw.requests / (raw.durationMs / 1000), 1),
    latencyMs: roundSummary(summarize(raw.latenciesMs)),
    statuses: raw.statuses,
    errors: raw.errors,
    callsPerRequest: Object.fromEntries(Object.entries(calls).map(([k, v]) => [k, round(v / served, 4)])),
  };
  options.progress(
    `  ${result.endpoint}: ${result.requestsPerSecond} req/s, p50 ${result.latencyMs.p50} ms, p99 ${result.latencyMs.p99} ms, statuses ${JSON.stringify(result.statuses)}`,
  );
  return result;
}
