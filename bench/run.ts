/**
 * `npm run bench` (issue 7): every measurement side by side in one run, on this machine.
 * Writes bench/results.json and bench/RESULTS.md. Not a test: nothing asserts a timing.
 *
 *   1 cold start per function vs its own SDK floor          bench/cold-start.ts, cold-start-floor.ts, cold-start-record.ts
 *   2 warm latency per endpoint vs its I/O floor             bench/warm-latency.ts, invoke.ts, floor.ts
 *   3 AWS calls per request (SDK middleware)                 bench/aws-calls.ts, call-paths.ts
 *   4 HL7 encoder throughput vs @medplum/core and hl7v2      bench/hl7-throughput.ts
 *   5 local API throughput under load (concurrency 16)       bench/load.ts, load-client.mjs
 *   6 cost per million requests                              bench/cost.ts
 *   7 writes per partition key under the issue 31 mix         bench/partitions.ts
 *   issue 31 targets (rows 31.1-31.6 of the targets table):
 *     31.1 authorizer DynamoDB calls per request             bench/authorizer-calls.ts (own stack)
 *     31.2 write units per single-result lab submission      bench/lab-write-units.ts (own stack)
 *     31.3 largest partition key share (container model)     bench/partitions.ts (own stack)
 *     31.4 scale with the chart and the inbox                bench/scale.ts (contract: scale-contract.ts)
 *     31.5 bundles and init vs the SDK floor, source maps    measurement 1 + the bundles' files
 *     31.6 HL7 encoder vs @medplum/core                      measurement 4
 *   DynamoDB capacity units per request for the cost model   bench/capacity-units.ts
 *
 * Options (for development; the committed figures come from a plain `npm run bench`):
 *   --quick   small counts, to check the plumbing in a few minutes (results are not representative)
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient, kmsClient, s3Client, sqsClient } from '../lib/aws/clients';
import { ApiKeyStore } from '../lib/keys/api-key-store';
import { MAX_ACCESS_RECORD_AGE_SECONDS } from '../lib/keys/access-records';
import { setLogSink } from '../lib/observability/logger';
import { startTestStack } from '../test/support/local-stack';
import { CallRecorder, type PathCalls } from './aws-calls';
import { measureAuthorizerCalls, type AuthorizerCallsResult } from './authorizer-calls';
import { simulateNewContainer, traceOne } from './call-paths';
import { CapacityMeter, type CapacityUnits } from './capacity-units';
import { measureColdStart, type ColdStartResult } from './cold-start';
import { costOf, PRICES, AWS_CALL_MS_ASSUMED, LAB_SUBMISSION_COST_BEFORE_ISSUE_31, type CostLine } from './cost';
import { createBenchKeys, DEMO, labResultBody } from './fixtures';
import { FloorReplayer } from './floor';
import { invoke } from './invoke';
import { measureHl7Throughput, profileOurs, type Hl7Result } from './hl7-throughput';
import { measureLabWriteUnits, renderWriteUnits, TARGET_WRITE_UNITS, type WriteUnitsResult } from './lab-write-units';
import { measureLoad, type LoadResult } from './load';
import { measurePartitions, type PartitionResult } from './partitions';
import { machineInfo, type MachineInfo } from './machine';
import { renderMarkdown } from './report';
import { measureScale } from './scale';
import type { ScaleMeasurement } from './scale-contract';
import { inboxPacketBody, inboxState, LAB_INTAKE, labIntakePresent, scenarioFor, type Scenario } from './scenarios';
import { round } from './stats';
import { measureEndpoint, type LatencyResult } from './warm-latency';
import { readBenchCommand } from './run-command';
import { processIo } from '../lib/admin/cli-runner';

const ROOT = path.resolve(__dirname, '..');
// the command line is read before anything starts: --help and wrong usage exit here (bench/run-command.ts)
const COMMAND = readBenchCommand(process.argv.slice(2), processIo);
if ('exitCode' in COMMAND) process.exit(COMMAND.exitCode);
const QUICK = COMMAND.quick;

export const TARGETS = {
  coldStartRatio: 1.15,
  warmP50Ratio: 1.25,
  exportHandlerDynamoCalls: 3,
  labKmsCallsPer100Results: 1,
  hl7VsFastestPeer: 10,
  /** issue 31 */
  authorizerDynamoCalls: 1,
  labWriteUnits: TARGET_WRITE_UNITS,
  largestPartitionShare: 0.01,
  bundleRatio: 1.15,
  hl7VsMedplum: 5,
  hl7VsMedplumGoal: 10,
} as const;

const COUNTS = QUICK
  ? {
      coldRuns: 3,
      requests: 200,
      floorRuns: 100,
      warmup: 20,
      blocks: 2,
      dispatchRuns: 30,
      traceSamples: 4,
      loadMs: 2000,
      loadWarmupMs: 300,
      hl7RoundMs: 150,
      hl7Rounds: 2,
      authorizerWarmup: 20,
      authorizerSamples: 5,
      labWriteUnitSubmissions: 10,
      partitionLabSubmissions: 100,
      meteredRequests: 2,
    }
  : {
      coldRuns: 12,
      requests: 2000,
      floorRuns: 1000,
      warmup: 100,
      blocks: 10,
      dispatchRuns: 200,
      traceSamples: 6,
      loadMs: 10_000,
      loadWarmupMs: 1000,
      hl7RoundMs: 400,
      hl7Rounds: 5,
      authorizerWarmup: 100,
      authorizerSamples: 20,
      labWriteUnitSubmissions: 50,
      partitionLabSubmissions: 1000,
      meteredRequests: 5,
    };
/** the partition run's concurrency, and as many simulated authorizer containers */
const PARTITION_CONCURRENCY = 8;

/** The endpoints timed in measurement 2, in order. routeInboxPacket consumes an inbox packet per request: traced only. */
const WARM_ENDPOINTS = [
  'exportHl7Note',
  'exportHl7PatientAdt',
  'exportHl7Encounter',
  'exportHl7Assessment',
  'exportHl7PatientSummary',
  'receiveTestData',
  'receiveFormIntakeScope',
  'listInteropInbox',
  'getInboxPacket',
  'fhirPatientRead',
  'fhirPatientEverything',
];
const LOAD_ENDPOINTS = ['exportHl7Note', 'receiveTestData'];

export interface LabIntakeState {
  presentAtStart: boolean;
  presentAtEnd: boolean;
  measured: boolean;
  reason?: string;
}

export interface BenchResults {
  generatedBy: string;
  quick: boolean;
  machine: MachineInfo;
  totalRunSeconds: number;
  targets: typeof TARGETS;
  counts: typeof COUNTS;
  labIntake: LabIntakeState;
  coldStart: ColdStartResult;
  warmLatency: LatencyResult[];
  notTimed: Array<{ endpoint: string; reason: string }>;
  calls: { steady: PathCalls[]; paths: PathCalls[]; labKms: LabKms | { notMeasured: string } };
  hl7: Hl7Result;
  load: Array<LoadResult | { endpoint: string; notMeasured: string }>;
  cost: { prices: typeof PRICES; awsCallMsAssumed: number; lines: CostLine[] };
  /** measurement 7 (issue 31): writes per partition key under the mix of lab results, form packets and audited failures */
  partitions?: PartitionResult;
  issue31: Issue31Results;
}

export interface Issue31Results {
  authorizer: AuthorizerCallsResult;
  /** the revocation-bound test named in row 31.1, as found in its file */
  revocationTest: { file: string; title: string | null; assertsUnauthenticated: boolean; injectedClock: boolean };
  labWriteUnits: WriteUnitsResult | { notMeasured: string };
  labWriteUnitsTable: string[];
  scale: ScaleMeasurement;
  sourceMaps: SourceMapCheck;
  costBefore: typeof LAB_SUBMISSION_COST_BEFORE_ISSUE_31;
}

export interface SourceMapCheck {
  bundles: number;
  /** bundles with a .map file beside them and a linked (not inline) sourceMappingURL */
  beside: number;
  inline: string[];
  missing: string[];
}

export interface LabKms {
  /** KMS calls per 1,000 submissions in the timed sequential run (steady state, data key cache warm) */
  timedRun: { submissions: number; kmsCalls: Record<string, number>; per1000: number };
  /** the same under the 16-way load (all requests the stack served, warm-up included) */
  loadRun?: { kmsPerRequest: number; per1000: number };
  /** cold-path KMS calls (first request ever; first request of a new container) */
  coldPaths: Record<string, number>;
  /** results (test results) per submission in the bench body */
  resultsPerSubmission: number;
  dataKeyBound: string;
}

function progress(line: string): void {
  process.stdout.write(line + '\n');
}

const f2 = (x: number) => x.toFixed(2);

/**
 * Issue 31 item 5: source maps shipped beside the bundle, not inside. Every bundle the cold-start
 * measurement built (LAMBDA_BUNDLE_OPTIONS, as deployed) is read: an inline
 * `sourceMappingURL=data:` fails; a linked URL needs its .map file next to the bundle.
 */
function checkSourceMaps(dir: string): SourceMapCheck {
  const result: SourceMapCheck = { bundles: 0, beside: 0, inline: [], missing: [] };
  const walk = (d: string): string[] =>
    existsSync(d) ? readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(path.join(d, e.name)) : [path.join(d, e.name)])) : [];
  for (const file of walk(dir).filter((x) => /\.m?js$/.test(x))) {
    result.bundles += 1;
    const name = path.relative(dir, file);
    const code = readFileSync(file, 'utf8');
    const url = /\/\/# sourceMappingURL=(\S+)\s*$/.exec(code)?.[1];
    if (code.includes('sourceMappingURL=data:')) result.inline.push(name);
    else if (!url || !existsSync(path.join(path.dirname(file), url))) result.missing.push(name);
    else result.beside += 1;
  }
  return result;
}

/** Row 31.1 names the revocation-bound test; the bench checks it is there and what it asserts. */
function findRevocationTest(): Issue31Results['revocationTest'] {
  const file = 'lib/keys/access-decision.test.ts';
  const full = path.join(ROOT, file);
  if (!existsSync(full)) return { file, title: null, assertsUnauthenticated: false, injectedClock: false };
  const text = readFileSync(full, 'utf8');
  const match = /it\(\s*([`'"])(revocation:.*?)\1\s*,\s*async \(\) => \{([\s\S]*?)\n {2}\}\);/.exec(text);
  if (!match) return { file, title: null, assertsUnauthenticated: false, injectedClock: false };
  const title = match[2]!.replace(/\$\{MAX_ACCESS_RECORD_AGE_SECONDS\}/g, String(MAX_ACCESS_RECORD_AGE_SECONDS));
  const body = match[3]!;
  return {
    file,
    title,
    assertsUnauthenticated: /toBe\(AccessOutcomes\.unauthenticated\)/.test(body),
    injectedClock: /\bat\(/.test(body) && !/Date\.now\(\)/.test(body),
  };
}

function notMeasured(error: Error): { notMeasured: string } {
  process.stderr.write(`[bench] measurement failed: ${error.stack ?? error.message}\n`);
  return { notMeasured: `not measured (failed: ${error.name}: ${error.message.split('\n')[0]!.slice(0, 200)})` };
}

function elapsed(start: number): string {
  return `${((Date.now() - start) / 1000).toFixed(1)} s`;
}

async function main(): Promise<void> {
  const started = Date.now();
  const machine = machineInfo(ROOT);
  progress(
    `[bench] ${machine.cpuModel}, ${machine.cores} cores, ${machine.memoryGiB} GiB, node ${machine.node}, ${machine.date}${QUICK ? '  (--quick: NOT representative)' : ''}`,
  );
  const lab: LabIntakeState = { presentAtStart: labIntakePresent(ROOT), presentAtEnd: false, measured: false };
  if (!lab.presentAtStart) lab.reason = 'not measured (endpoint missing)';
  progress(`[bench] lab intake (functions/${LAB_INTAKE}.ts): ${lab.presentAtStart ? 'present' : 'missing -> its parts are reported as not measured'}`);

  // ---- 1. cold start (child processes; nothing else running)
  const workDir = mkdtempSync(path.join(os.tmpdir(), 'interop-bench-'));
  progress(`[1/6] cold start: bundles and init time (${elapsed(started)})`);
  const coldStart = await measureColdStart({ root: ROOT, workDir, runs: COUNTS.coldRuns, target: TARGETS.coldStartRatio, progress });
  const sourceMaps = checkSourceMaps(path.join(workDir, 'functions'));
  progress(
    `  source maps: ${sourceMaps.beside} of ${sourceMaps.bundles} bundles with the map beside; inline: ${sourceMaps.inline.length}; missing: ${sourceMaps.missing.length}`,
  );
  rmSync(workDir, { recursive: true, force: true });
  for (const f of coldStart.functions) {
    progress(
      `  ${f.name.padEnd(26)} ${(f.bundle.bytes / 1024).toFixed(0).padStart(5)} KB (${f.ratios.size}x floor)  init ${f.timing.firstCallMs?.toFixed(1) ?? 'n/a'} ms (${f.ratios.firstCallMs ?? 'n/a'}x)${f.extraClients.length ? `  extra clients: ${f.extraClients.join(', ')}` : ''}`,
    );
  }

  // ---- 4. HL7 encoders (in process, before the stack starts)
  progress(`[4/6] HL7 encoder throughput (${elapsed(started)})`);
  const hl7 = measureHl7Throughput({ roundMs: COUNTS.hl7RoundMs, rounds: COUNTS.hl7Rounds, progress });
  hl7.profile = await profileOurs(QUICK ? 300 : 1000);

  // ---- the local stack
  progress(`[stack] starting the local stack in process (${elapsed(started)})`);
  let logBytes = 0;
  setLogSink((line) => {
    logBytes += Buffer.byteLength(line) + 1;
  });
  const stack = await startTestStack({ prefix: 'interop-bench', env: { LOG_LEVEL: 'info' } });
  const adminDb = new DynamoDBClient({ endpoint: stack.urls.dynamodb });
  await createBenchKeys(new ApiKeyStore(adminDb, stack.tables.keys), new Date());
  const recorder = new CallRecorder();
  recorder.attach({ dynamodb: dynamoDbClient(), kms: kmsClient(), sqs: sqsClient(), s3: s3Client() });
  const meter = new CapacityMeter(stack.urls.dynamodb, stack.tables);
  const metered = new Map<string, CapacityUnits & { requests: number }>();
  const replayer = new FloorReplayer(stack.urls);

  const warmLatency: LatencyResult[] = [];
  const notTimed: Array<{ endpoint: string; reason: string }> = [];
  const paths: PathCalls[] = [];
  const load: BenchResults['load'] = [];
  let labKms: LabKms | { notMeasured: string } = { notMeasured: lab.reason ?? 'not measured' };
  const labColdKms: Record<string, number> = {};
  const kmsOf = (p: PathCalls) => p.calls.filter((c) => c.call.startsWith('kms.')).length;

  try {
    // ---- 3. call paths that need a fresh state come first
    progress(`[3/6] AWS calls per request: special paths (${elapsed(started)})`);
    const note = scenarioFor('exportHl7Note')!;
    paths.push(
      (
        await traceOne(
          recorder,
          { ...note, key: { ...note.key, secret: 'bench-unknown-key' } },
          note.request(0),
          'unknown API key (anonymous counter; handler answers 401)',
        )
      ).traced,
    );
    paths.push((await traceOne(recorder, note, { query: { patientId: DEMO.patientId, noteId: 'no-such-note' } }, 'note not found (404)')).traced);

    const labScenario = scenarioFor(LAB_INTAKE);
    if (lab.presentAtStart && labScenario) {
      try {
        const first = await traceOne(recorder, labScenario, labScenario.request(0), 'first request ever (creates the lookup key; new data key)');
        paths.push(first.traced);
        if (first.invocation.status !== 200) {
          lab.reason = `not measured (endpoint failing: status ${first.invocation.status}: ${first.invocation.body.slice(0, 200)})`;
        } else {
          lab.measured = true;
          labColdKms['first request ever'] = kmsOf(first.traced);
          const body = JSON.stringify(labResultBody(`idem-${Date.now()}`));
          const requestId = `bench-${Date.now().toString(36)}`;
          paths.push(
            (await traceOne(recorder, labScenario, { body, headers: { 'x-request-id': requestId } }, 'new result with x-request-id (idempotency)')).traced,
          );
          paths.push((await traceOne(recorder, labScenario, { body, headers: { 'x-request-id': requestId } }, 'replay: same x-request-id, same body')).traced);
          paths.push((await traceOne(recorder, labScenario, { body }, 'exact resend without x-request-id (duplicate version)')).traced);
        }
      } catch (error) {
        lab.reason = `not measured (endpoint failing: ${(error as Error).name}: ${(error as Error).message.slice(0, 200)})`;
      }
    }

    // inbox packets for getInboxPacket / routeInboxPacket
    const forms = scenarioFor('receiveFormIntakeScope')!;
    for (let i = 0; i < 2; i++) {
      const { invocation } = await traceOne(recorder, forms, { body: JSON.stringify(inboxPacketBody()) }, 'inbox setup');
      const packetId = (JSON.parse(invocation.body) as { packetId?: string }).packetId;
      if (invocation.status === 202 && packetId) {
        if (!inboxState.packetId) inboxState.packetId = packetId;
        else inboxState.routablePacketIds.push(packetId);
      }
    }
    const formsHeld = await traceOne(recorder, forms, { body: JSON.stringify(inboxPacketBody()) }, 'new packet, unknown patient id (held in the inbox, 202)');
    paths.push(formsHeld.traced);
    const heldId = (JSON.parse(formsHeld.invocation.body) as { packetId?: string }).packetId;
    if (heldId) inboxState.routablePacketIds.push(heldId);
    const route = scenarioFor('routeInboxPacket')!;
    paths.push((await traceOne(recorder, route, route.request(0), route.path)).traced);
    notTimed.push({ endpoint: 'routeInboxPacket', reason: 'each request routes (consumes) an inbox packet: traced once (calls, cost) but not timed' });

    // ---- 2. warm latency (+ the steady-state traces for 3)
    progress(`[2/6] warm latency: ${COUNTS.requests} requests per endpoint vs ${COUNTS.floorRuns} floor replays (${elapsed(started)})`);
    for (const name of WARM_ENDPOINTS) {
      const scenario = scenarioFor(name);
      if (!scenario) continue;
      if (name === LAB_INTAKE && !lab.measured) {
        notTimed.push({ endpoint: name, reason: lab.reason ?? 'not measured' });
        progress(`  ${name}: ${lab.reason}`);
        continue;
      }
      if (name === 'getInboxPacket' && !inboxState.packetId) {
        notTimed.push({ endpoint: name, reason: 'no inbox packet could be created' });
        continue;
      }
      const result = await measureEndpoint(scenario, recorder, replayer, {
        requests: COUNTS.requests,
        floorRuns: COUNTS.floorRuns,
        warmup: COUNTS.warmup,
        blocks: COUNTS.blocks,
        dispatchRuns: COUNTS.dispatchRuns,
        traceSamples: COUNTS.traceSamples,
        logBytes: () => logBytes,
        progress,
      });
      warmLatency.push(result);
    }

    // ---- 5. load
    progress(`[5/6] local API under load: concurrency 16, ${COUNTS.loadMs / 1000} s each (${elapsed(started)})`);
    for (const name of LOAD_ENDPOINTS) {
      const scenario = scenarioFor(name) as Scenario;
      if (name === LAB_INTAKE && !lab.measured) {
        load.push({ endpoint: name, notMeasured: lab.reason ?? 'not measured' });
        progress(`  ${name}: ${lab.reason}`);
        continue;
      }
      load.push(
        await measureLoad(ROOT, stack.urls.api, scenario, recorder, { concurrency: 16, durationMs: COUNTS.loadMs, warmupMs: COUNTS.loadWarmupMs, progress }),
      );
    }

    // ---- 6. DynamoDB capacity units per request, metered (outside the timed runs; before the clients are replaced)
    progress(`[6a] DynamoDB capacity units: ${COUNTS.meteredRequests} metered requests per endpoint (${elapsed(started)})`);
    meter.attach(dynamoDbClient()); // only now: the timed runs above went through the same middleware stack as before
    for (const w of warmLatency) {
      const scenario = scenarioFor(w.endpoint)!;
      const sum: CapacityUnits = { rru: 0, wruTable: 0, wruIndex: 0, wru: 0 };
      for (let i = 0; i < COUNTS.meteredRequests; i++) {
        const { value, units } = await meter.measure(() => invoke(scenario, scenario.request(i), recorder));
        if (!scenario.okStatus.includes(value.status)) throw new Error(`${w.endpoint}: metered request answered ${value.status}`);
        for (const k of Object.keys(sum) as Array<keyof CapacityUnits>) sum[k] += units[k];
      }
      const n = COUNTS.meteredRequests;
      metered.set(w.endpoint, { rru: sum.rru / n, wruTable: sum.wruTable / n, wruIndex: sum.wruIndex / n, wru: sum.wru / n, requests: n });
      progress(`  ${w.endpoint.padEnd(24)} ${f2(sum.rru / n)} RRU, ${f2(sum.wru / n)} WRU (${f2(sum.wruIndex / n)} of them index) per request`);
    }

    // ---- 3. lab intake KMS accounting, and the new-container path (last: it replaces the SDK clients)
    if (lab.measured && labScenario) {
      const timed = warmLatency.find((w) => w.endpoint === LAB_INTAKE);
      const loadLab = load.find((l): l is LoadResult => 'requests' in l && l.endpoint === LAB_INTAKE);
      simulateNewContainer(recorder);
      const fresh = await traceOne(
        recorder,
        labScenario,
        labScenario.request(0),
        'first request of a new container (lookup key read + unwrapped; new data key)',
      );
      paths.push(fresh.traced);
      labColdKms['first request of a new container'] = kmsOf(fresh.traced);
      const timedKms = Object.fromEntries(
        Object.entries(timed?.callsPerRequest ?? {})
          .filter(([k]) => k.startsWith('kms.'))
          .map(([k, v]) => [k, round(v * (timed?.requests ?? 0), 0)]),
      );
      const timedTotal = Object.values(timedKms).reduce((s, v) => s + v, 0);
      const loadKms = loadLab
        ? Object.entries(loadLab.callsPerRequest)
            .filter(([k]) => k.startsWith('kms.'))
            .reduce((s, [, v]) => s + v, 0)
        : undefined;
      labKms = {
        timedRun: { submissions: timed?.requests ?? 0, kmsCalls: timedKms, per1000: round((timedTotal / Math.max(1, timed?.requests ?? 1)) * 1000, 2) },
        ...(loadKms !== undefined ? { loadRun: { kmsPerRequest: round(loadKms, 5), per1000: round(loadKms * 1000, 2) } } : {}),
        coldPaths: labColdKms,
        resultsPerSubmission: ((labResultBody(0).data as { results: unknown[] }).results ?? []).length,
        dataKeyBound: 'LAB_RESULT_DATA_KEY_MAX_USES = 1000 encryptions or 5 minutes per data key (lib/results/result-wiring.ts); 2 encryptions per submission',
      };
    }
  } finally {
    replayer.close();
    meter.close();
    adminDb.destroy();
    await stack.close();
  }
  lab.presentAtEnd = labIntakePresent(ROOT);
  if (lab.presentAtEnd !== lab.presentAtStart)
    progress(`[bench] NOTE: the lab intake was ${lab.presentAtEnd ? 'added' : 'removed'} during the run; run again for a consistent picture`);

  // ---- 7. partitions: a stack of its own, with the background workers (the matcher moves packets on)
  progress(`[7, 31.3] writes per partition key (${elapsed(started)})`);
  const partitionStack = await startTestStack({ prefix: 'interop-bench-partitions', backgroundWorkers: true, env: { LOG_LEVEL: 'warn' } });
  let partitions: PartitionResult;
  try {
    partitions = await measurePartitions(partitionStack, {
      labSubmissions: COUNTS.partitionLabSubmissions,
      concurrency: PARTITION_CONCURRENCY,
      containers: PARTITION_CONCURRENCY,
      progress,
    });
  } finally {
    await partitionStack.close();
  }

  // ---- issue 31: the authorizer's calls (own stack), the lab intake's write units (own stack), scale
  progress(`[31.1] authorizer DynamoDB calls per request (${elapsed(started)})`);
  const authorizer = await measureAuthorizerCalls({ warmup: COUNTS.authorizerWarmup, samples: COUNTS.authorizerSamples, progress });
  progress(`[31.2] write units per single-result lab submission (${elapsed(started)})`);
  // a measurement that fails is reported as not measured (with its error), so the rest of the run still renders
  const labWriteUnits = await measureLabWriteUnits(COUNTS.labWriteUnitSubmissions).catch((error: Error) => notMeasured(error));
  progress(
    'notMeasured' in labWriteUnits
      ? `  ${labWriteUnits.notMeasured}`
      : `  intake ${f2(labWriteUnits.intakeUnits)} write units, authorizer ${f2(labWriteUnits.authorizerUnits)}`,
  );
  progress(`[31.4] scale with the chart and the inbox (${elapsed(started)})`);
  const scale = await measureScale({ quick: QUICK, progress }).catch((error: Error): ScaleMeasurement => ({
    row: { result: notMeasured(error).notMeasured, met: false },
    section: [],
    json: null,
  }));
  progress(`  ${scale.row.result} (${scale.row.met ? 'met' : 'missed'})`);

  // ---- 6. cost
  progress(`[6b] cost model (${elapsed(started)})`);
  const lines: CostLine[] = [];
  for (const w of warmLatency) {
    const callMs = w.traced.calls.filter((c) => c.phase !== 'other');
    const units = metered.get(w.endpoint)!;
    lines.push(
      costOf({
        endpoint: w.endpoint,
        path: w.path,
        traced: w.traced,
        billedMs: w.billedMs,
        callsPerRequest: w.callsPerRequest,
        logBytesPerRequest: w.logBytesPerRequest,
        localCallMs: callMs.reduce((s, c) => s + c.ms, 0) / Math.max(1, callMs.length),
        units: { rru: units.rru, wru: units.wru, wruIndex: units.wruIndex, requests: units.requests },
      }),
    );
  }
  for (const l of lines)
    progress(
      `  ${l.endpoint.padEnd(24)} $${l.perMillion.total.toFixed(2)} per 1M requests (with ${AWS_CALL_MS_ASSUMED} ms per AWS call: $${l.totalWithAwsLatency.toFixed(2)})`,
    );

  const results: BenchResults = {
    generatedBy: 'npm run bench (bench/run.ts)',
    quick: QUICK,
    machine,
    totalRunSeconds: Math.round((Date.now() - started) / 1000),
    targets: TARGETS,
    counts: COUNTS,
    labIntake: lab,
    coldStart,
    warmLatency,
    notTimed,
    calls: { steady: warmLatency.map((w) => w.traced), paths, labKms },
    hl7,
    load,
    cost: { prices: PRICES, awsCallMsAssumed: AWS_CALL_MS_ASSUMED, lines },
    partitions,
    issue31: {
      authorizer,
      revocationTest: findRevocationTest(),
      labWriteUnits,
      labWriteUnitsTable: 'notMeasured' in labWriteUnits ? [] : renderWriteUnits(labWriteUnits),
      scale,
      sourceMaps,
      costBefore: LAB_SUBMISSION_COST_BEFORE_ISSUE_31,
    },
  };
  writeFileSync(path.join(ROOT, 'bench', 'results.json'), JSON.stringify(results, null, 2) + '\n');
  writeFileSync(path.join(ROOT, 'bench', 'RESULTS.md'), renderMarkdown(results));
  progress(`[bench] done in ${elapsed(started)}: bench/results.json, bench/RESULTS.md`);
}

main().catch((error: Error) => {
  process.stderr.write(`bench failed: ${error.stack ?? error.message}\n`);
  process.exit(1);
});
