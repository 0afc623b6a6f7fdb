/**
 * One child process of bench/scale.ts: a Lambda container of one function that walks pages of one
 * listing (the HL7 summary, FHIR $everything or the interop inbox) against the local stack the
 * parent runs (its environment: endpoints, tables, KMS key). The handler is invoked in process as
 * the local API Gateway does (function-registry, Lambda context), with an authorizer context that
 * allows the request (the authorizer is another function: not measured here).
 *
 *   node --expose-gc --import tsx bench/scale-child.ts '<job JSON>'
 *
 * Measured per page: handler time, DynamoDB read units (ReturnConsumedCapacity TOTAL added to every
 * read the handler sends: dynalite prices it as DynamoDB does, 4 KB units, half for eventually
 * consistent reads), the response's bytes as Lambda carries them (body inside the JSON response).
 * Memory: a full GC before each page (outside the timed part), then RSS and heap sampled every 2 ms
 * while the page runs and at its end: the most one invocation takes above the collected heap, and the
 * process's peak RSS. (getrusage's maxRSS is useless here: Linux keeps the parent's high-water mark
 * across fork + exec, and the parent holds the whole in-memory DynamoDB.)
 * Prints one line: SCALE_RESULT <JSON>.
 */
import type { APIGatewayProxyResult } from 'aws-lambda';
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient } from '../lib/aws/clients';
import { tableName } from '../lib/dynamo/table-names';
import { HttpEndpoints, Scopes } from '../lib/config/service';
import { loadHandler } from '../lib/local/function-registry';
import { lambdaContext } from '../lib/local/lambda-context';
import { setLogSink } from '../lib/observability/logger';
import { allowContext, BENCH_KEYS, proxyEvent, type BenchKey, type RequestSpec } from './fixtures';
import { replayCalls, type PageCall } from './page-replay';

export interface ScaleJob {
  kind: 'summary' | 'everything' | 'inbox';
  /** summary, everything: the patient */
  patientId?: string;
  pageSize: number;
  /** walks: each from the top (no cursor) or from a cursor; at most maxPages pages each (default: to the end) */
  walks: Array<{ label: string; cursor?: string; maxPages?: number }>;
  /**
   * after each page, replay the DynamoDB calls it made (same commands and inputs, through the same
   * client, in the same order, concurrent where the page ran them concurrently) and time that too:
   * the emulator's share of the page at this size, measured in the same container at the same moment
   */
  replay?: boolean;
}

export interface WalkResult {
  label: string;
  pages: number;
  records: number;
  ms: number[];
  readUnits: number[];
  responseBytes: number[];
  /** DynamoDB calls the page made */
  calls: number[];
  /** the page's DynamoDB calls replayed alone right after it (ms; job.replay only) */
  replayMs: number[];
  /** heap above the collected heap at the page's start (MiB, sampled) */
  heapGrowthMiB: number[];
  statuses: number[];
}

export interface ScaleChildResult {
  kind: ScaleJob['kind'];
  walks: WalkResult[];
  /** the emulator's time for one small call at this size: median of GetItem of one chart item (ms) */
  emulatorCallMs: number;
  memory: {
    baselineRssMiB: number;
    peakRssMiB: number;
    heapAfterWarmupMiB: number;
    heapPeakSampledMiB: number;
    maxPageHeapGrowthMiB: number;
    heapAfterWalkGcMiB: number;
  };
}

const READS = new Set(['QueryCommand', 'GetItemCommand', 'BatchGetItemCommand', 'ScanCommand']);
const MiB = 1024 * 1024;

const ENDPOINT = { summary: 'exportHl7PatientSummary', everything: 'fhirPatientEverything', inbox: 'listInteropInbox' } as const;
// the inbox key's decision as the authorizer writes it: interop:inbox:review implies interop:inbox:read
const KEY: Record<ScaleJob['kind'], BenchKey> = {
  summary: BENCH_KEYS.export,
  everything: BENCH_KEYS.fhir,
  inbox: { ...BENCH_KEYS.inbox, scopes: [Scopes.inboxReview, Scopes.inboxRead] },
};

function requestOf(job: ScaleJob, cursor: string | undefined): RequestSpec {
  switch (job.kind) {
    case 'summary':
      return { query: { patientId: job.patientId!, limit: String(job.pageSize), ...(cursor ? { cursor } : {}) }, headers: { accept: 'application/hl7-v2' } };
    case 'everything':
      return {
        pathParameters: { id: job.patientId! },
        query: { _count: String(job.pageSize), ...(cursor ? { _page_token: cursor } : {}) },
        headers: { accept: 'application/fhir+json' },
      };
    case 'inbox':
      return { query: { state: 'pending_review', limit: String(job.pageSize), ...(cursor ? { cursor } : {}) } };
  }
}

/** Records on the page and the cursor of the next one. */
function pageOf(job: ScaleJob, result: APIGatewayProxyResult): { records: number; next?: string } {
  const headers = Object.fromEntries(Object.entries(result.headers ?? {}).map(([k, v]) => [k.toLowerCase(), String(v)]));
  switch (job.kind) {
    case 'summary':
      return { records: Number((headers['x-summary-records'] ?? '0/0').split('/')[0]), next: headers['x-summary-next-cursor'] };
    case 'everything': {
      const bundle = JSON.parse(result.body) as { entry?: Array<{ resource: { resourceType: string } }>; link?: Array<{ relation: string; url: string }> };
      const next = bundle.link?.find((l) => l.relation === 'next')?.url;
      return {
        records: (bundle.entry ?? []).filter((e) => e.resource.resourceType !== 'Patient').length,
        next: next ? (new URL(next, 'https://x').searchParams.get('_page_token') ?? undefined) : undefined,
      };
    }
    case 'inbox': {
      const body = JSON.parse(result.body) as { items: unknown[]; nextCursor?: string };
      return { records: body.items.length, next: body.nextCursor };
    }
  }
}

async function main(): Promise<void> {
  const job = JSON.parse(process.argv[2]!) as ScaleJob;
  setLogSink(() => undefined);
  const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);
  let counting = false;
  let units = 0;
  let calls = 0;
  let pageCalls: PageCall[] = [];
  dynamoDbClient().middlewareStack.add(
    (next, context) => async (args) => {
      const read = READS.has(String(context.commandName));
      if (read) (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      if (counting) calls += 1;
      const record: PageCall | undefined =
        counting && job.replay
          ? { command: String(context.commandName), input: structuredClone(args.input) as Record<string, unknown>, startNs: process.hrtime.bigint() }
          : undefined;
      if (record) pageCalls.push(record);
      const out = await next(args).finally(() => {
        if (record) record.endNs = process.hrtime.bigint();
      });
      if (read && counting) {
        const consumed = (out.output as { ConsumedCapacity?: { CapacityUnits?: number } | Array<{ CapacityUnits?: number }> }).ConsumedCapacity;
        for (const c of Array.isArray(consumed) ? consumed : consumed ? [consumed] : []) units += c.CapacityUnits ?? 0;
      }
      return out;
    },
    { step: 'initialize', name: 'scaleReadUnits' },
  );
  const endpoint = HttpEndpoints.find((e) => e.name === ENDPOINT[job.kind])!;
  const handler = await loadHandler(endpoint.name);
  const key = KEY[job.kind];
  const invoke = async (cursor: string | undefined, pageSize = job.pageSize) => {
    const event = proxyEvent(endpoint, requestOf({ ...job, pageSize }, cursor), key.secret);
    const context = allowContext(key);
    event.requestContext.authorizer = { ...context, principalId: String((context as Record<string, unknown>).keyId ?? 'bench') };
    return (await handler(event, lambdaContext(endpoint.name, endpoint.timeoutSeconds), () => undefined)) as APIGatewayProxyResult;
  };

  // warm-up: module, clients, KMS data keys and lookup keys (once per container), a small page
  const warm = await invoke(undefined, 1);
  if (warm.statusCode !== 200) throw new Error(`warm-up answered ${warm.statusCode}: ${warm.body.slice(0, 300)}`);
  // the emulator's floor at this size (the parent's in-memory DynamoDB slows as its heap grows)
  const floor: number[] = [];
  for (let i = 0; i < 31; i += 1) {
    const t = process.hrtime.bigint();
    await dynamoDbClient().send(new GetItemCommand({ TableName: tableName('chart'), Key: { pk: { S: 'PATIENT#demo-patient-1' }, sk: { S: 'PATIENT' } } }));
    floor.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  floor.sort((a, b) => a - b);
  gc();
  const baselineRss = process.memoryUsage.rss();
  const heapAfterWarmup = process.memoryUsage().heapUsed;
  let heapPeak = heapAfterWarmup;
  let rssPeak = baselineRss;
  let pageHeapPeak = 0;
  let replaying = false;
  const sample = () => {
    if (replaying) return; // the replay is the emulator's measurement, not the function's memory
    const m = process.memoryUsage();
    rssPeak = Math.max(rssPeak, m.rss);
    pageHeapPeak = Math.max(pageHeapPeak, m.heapUsed);
  };
  const sampler = setInterval(sample, 2);

  const walks: WalkResult[] = [];
  for (const walk of job.walks) {
    const result: WalkResult = {
      label: walk.label,
      pages: 0,
      records: 0,
      ms: [],
      readUnits: [],
      responseBytes: [],
      calls: [],
      replayMs: [],
      heapGrowthMiB: [],
      statuses: [],
    };
    let cursor = walk.cursor;
    do {
      gc();
      const heapBefore = process.memoryUsage().heapUsed;
      pageHeapPeak = heapBefore;
      units = 0;
      calls = 0;
      pageCalls = [];
      counting = true;
      const t0 = process.hrtime.bigint();
      const response = await invoke(cursor);
      const t1 = process.hrtime.bigint();
      counting = false;
      sample();
      heapPeak = Math.max(heapPeak, pageHeapPeak);
      result.heapGrowthMiB.push((pageHeapPeak - heapBefore) / MiB);
      result.statuses.push(response.statusCode);
      if (response.statusCode !== 200) throw new Error(`${job.kind} page ${result.pages + 1} answered ${response.statusCode}: ${response.body.slice(0, 300)}`);
      const page = pageOf(job, response);
      result.pages += 1;
      result.records += page.records;
      result.ms.push(Number(t1 - t0) / 1e6);
      result.readUnits.push(units);
      result.calls.push(calls);
      if (job.replay) {
        // a full GC first (untimed), as before each page: the page's garbage is not the replay's to collect
        gc();
        replaying = true;
        result.replayMs.push(await replayCalls(dynamoDbClient(), pageCalls));
        replaying = false;
      }
      // what Lambda carries: the proxy result as JSON (the body JSON-escaped inside it)
      result.responseBytes.push(Buffer.byteLength(JSON.stringify(response), 'utf8'));
      cursor = page.next;
    } while (cursor && (walk.maxPages === undefined || result.pages < walk.maxPages));
    walks.push(result);
  }
  clearInterval(sampler);
  const peakRss = rssPeak;
  gc();
  const out: ScaleChildResult = {
    kind: job.kind,
    walks,
    emulatorCallMs: floor[15]!,
    memory: {
      baselineRssMiB: baselineRss / MiB,
      peakRssMiB: peakRss / MiB,
      heapAfterWarmupMiB: heapAfterWarmup / MiB,
      heapPeakSampledMiB: heapPeak / MiB,
      maxPageHeapGrowthMiB: Math.max(0, ...walks.flatMap((w) => w.heapGrowthMiB)),
      heapAfterWalkGcMiB: process.memoryUsage().heapUsed / MiB,
    },
  };
  process.stdout.write(`\nSCALE_RESULT ${JSON.stringify(out)}\n`);
}

main().then(
  () => process.exit(0),
  (error: Error) => {
    process.stderr.write(`scale child failed: ${error.name}: ${error.message}\n`);
    process.exit(1);
  },
);
