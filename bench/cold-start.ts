/**
 * Measurement 1: cold start per function, beside a FLOOR bundle.
 *
 * Every function is bundled with scripts/build.ts LAMBDA_BUNDLE_OPTIONS (the deployed esbuild
 * settings) into a temporary directory. Its floor (issue 31 item 5) is a bundle, built the same way
 * in the same run, of the SDK doing what the function's cold invocation does
 * (bench/cold-start-floor.ts): the SDK clients the function's `needs` imply (DynamoDB always; KMS
 * when `needs.kms`; SQS when `needs.queues`; S3 when `needs.documentsBucket`; API Gateway when
 * `needs.apiGatewayKeys`) built exactly as lib/aws/clients.ts does, the Command classes of the
 * function's bundle, and the first burst of SDK calls its cold invocation starts (recorded in a
 * fresh process, bench/cold-start-record.ts), sent together. Functions with identical floors share
 * one. Beside it, reported but no longer the gate, the "client floor" of each client set (those
 * clients and one DynamoDB GetItem), the floor of every function before; a function whose
 * invocation makes no SDK call keeps the client floor.
 *
 * Init time = fresh `node` process (NODE_OPTIONS as deployed: --enable-source-maps), import() of
 * the bundle, one invocation with a realistic event (HTTP functions: a request the authorizer
 * allowed with the route's scope, see coldEvent), stopped at the first outgoing HTTP request
 * (bench/cold-start-child.mjs). So it covers module evaluation + building the clients + the code
 * up to the first SDK call, without network. A function whose invocation finishes without any
 * SDK call (the static pages, the FHIR capability statement and route-not-found) is measured to
 * its returned response instead ("init to response": import() + the whole invocation, a later end
 * point than the first SDK request, so never more lenient) and compared with the same floor init;
 * a 5xx response is not a measurement (the function did not serve). Runs of functions and floors
 * are interleaved; the first round is a discarded warm-up (file cache).
 *
 * Only some functions: `npx tsx bench/cold-start.ts --only listInteropInbox,sweepPendingPackets
 * [--runs 12]` (their floors are measured beside them in the same run).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build, type Metafile } from 'esbuild';
import { AuthorizerFunction, BackgroundFunctions, Env, HttpEndpoints, Queues, routeScopes, Tables, type ResourceNeeds } from '../lib/config/service';
import { ownCodeAllowance, OwnCodeBudgets, weighBundle } from '../lib/config/bundle-budgets';
import { LAMBDA_BUNDLE_OPTIONS, functionNames } from '../scripts/build';
import { sdkPackages } from '../scripts/sdk-packages';
import type { CallRecord } from './aws-calls';
import { allowContext, authorizerEvent, proxyEvent, BENCH_KEYS, DEMO, type BenchKey } from './fixtures';
import {
  CLIENT_PACKAGE,
  callFloorId,
  callFloorSource,
  commandsInBundle,
  commandsOfNeeds,
  decodeCalls,
  describeBurst,
  firstBurst,
  type BurstCall,
  type CallFloorSpec,
} from './cold-start-floor';
import { scenarioFor } from './scenarios';
import { median, round } from './stats';

/** the clients of the data path (the I/O floor of bench/floor.ts replays their calls) */
export type ClientId = 'dynamodb' | 'kms' | 'sqs' | 's3';
/** every client a function's `needs` can grant: the data path's, and API Gateway's (revokeExpiredKeys deletes gateway keys) */
export type BundleClientId = ClientId | 'apigateway';
const CLIENT_ORDER: BundleClientId[] = ['dynamodb', 'kms', 'sqs', 's3', 'apigateway'];

export function needsOf(name: string): ResourceNeeds {
  if (name === AuthorizerFunction.name) return AuthorizerFunction.needs;
  const fn = [...HttpEndpoints, ...BackgroundFunctions].find((f) => f.name === name);
  if (!fn) throw new Error(`unknown function ${name}`);
  return fn.needs;
}

export function clientsFromNeeds(needs: ResourceNeeds): BundleClientId[] {
  const set = new Set<BundleClientId>(['dynamodb']);
  if (needs.kms?.length) set.add('kms');
  if (needs.queues && Object.keys(needs.queues).length) set.add('sqs');
  if (needs.documentsBucket) set.add('s3');
  if (needs.apiGatewayKeys) set.add('apigateway');
  return CLIENT_ORDER.filter((c) => set.has(c));
}

/** The SDK-client floor (before issue 31's per-function floors, kept as a column): the clients of `needs`, one GetItem. */
export function clientFloorSource(clients: BundleClientId[]): string {
  const imports = clients.map((c) => `import { ${CLIENT_PACKAGE[c].cls}${c === 'dynamodb' ? ', GetItemCommand' : ''} } from '${CLIENT_PACKAGE[c].pkg}';`);
  const builds = clients.map((c) => {
    const extra = c === 's3' ? `, forcePathStyle: Boolean(endpoint('S3'))` : '';
    return `    ${c}: new ${CLIENT_PACKAGE[c].cls}({ ...common, endpoint: endpoint('${CLIENT_PACKAGE[c].env}')${extra} }),`;
  });
  return [
    ...imports,
    `const endpoint = (service: string) => process.env['AWS_ENDPOINT_URL_' + service] || undefined;`,
    `const common = { maxAttempts: 3 } as const;`,
    `let clients: Record<string, unknown> | undefined;`,
    `export const handler = async () => {`,
    `  const built = (clients ??= {`,
    ...builds,
    `  }) as { dynamodb: DynamoDBClient };`,
    `  await built.dynamodb.send(new GetItemCommand({ TableName: process.env.CHART_TABLE ?? 't', Key: { pk: { S: 'PATIENT#x' }, sk: { S: 'PATIENT' } } }));`,
    `  return { statusCode: 200 };`,
    `};`,
  ].join('\n');
}

// ---------------------------------------------------------------- bundles

export interface BundleInfo {
  bytes: number;
  gzipBytes: number;
  /** bytes in the output by package (node_modules package, or "app" for lib/ functions/) */
  byPackage: Record<string, number>;
  sdkClients: BundleClientId[];
  /** app files that import each bundled SDK client package */
  clientImporters: Partial<Record<BundleClientId, string[]>>;
  /** the largest app (lib/, functions/) files in the bundle, KB */
  topAppFiles: Array<{ file: string; kb: number }>;
  /** the SDK Command classes in the bundle, `client:XCommand` */
  sdkCommands: string[];
}

const APP_PACKAGE = 'app (lib/, functions/)';

function packageOf(input: string): string {
  const i = input.lastIndexOf('node_modules/');
  if (i < 0) return APP_PACKAGE;
  const rest = input.slice(i + 'node_modules/'.length).split('/');
  return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
}

function bundleInfo(outfile: string, metafile: Metafile, root: string): BundleInfo {
  const code = readFileSync(outfile);
  const key = path.relative(root, outfile).split(path.sep).join('/');
  const output = metafile.outputs[key];
  const byPackage: Record<string, number> = {};
  for (const [input, { bytesInOutput }] of Object.entries(output?.inputs ?? {})) {
    if (bytesInOutput === 0) continue;
    const pkg = packageOf(input);
    byPackage[pkg] = (byPackage[pkg] ?? 0) + bytesInOutput;
  }
  const sdkClients = CLIENT_ORDER.filter((c) => (byPackage[CLIENT_PACKAGE[c].pkg] ?? 0) > 0);
  const clientImporters: Partial<Record<BundleClientId, string[]>> = {};
  for (const [input, { imports }] of Object.entries(metafile.inputs)) {
    if (input.includes('node_modules/') || !(input in (output?.inputs ?? {}))) continue;
    for (const imp of imports) {
      const client = CLIENT_ORDER.find((c) => imp.original === CLIENT_PACKAGE[c].pkg);
      if (client && imp.kind === 'import-statement') (clientImporters[client] ??= []).push(input);
    }
  }
  const topAppFiles = Object.entries(output?.inputs ?? {})
    .filter(([input]) => !input.includes('node_modules/'))
    .sort((a, b) => b[1].bytesInOutput - a[1].bytesInOutput)
    .slice(0, 4)
    .map(([file, { bytesInOutput }]) => ({ file, kb: Math.round(bytesInOutput / 102.4) / 10 }));
  return {
    bytes: statSync(outfile).size,
    gzipBytes: gzipSync(code).length,
    byPackage,
    sdkClients,
    clientImporters,
    topAppFiles,
    sdkCommands: commandsInBundle(output?.inputs ?? {}),
  };
}

async function bundle(root: string, outfile: string, entry: { file: string } | { source: string; name: string }): Promise<BundleInfo> {
  mkdirSync(path.dirname(outfile), { recursive: true });
  const result = await build({
    ...LAMBDA_BUNDLE_OPTIONS,
    absWorkingDir: root,
    metafile: true,
    outfile,
    ...('file' in entry
      ? { entryPoints: [entry.file] }
      : { stdin: { contents: entry.source, resolveDir: root, sourcefile: `${entry.name}.ts`, loader: 'ts' as const } }),
  });
  return bundleInfo(outfile, result.metafile!, root);
}

// ---------------------------------------------------------------- events and environment

/** Required query parameters of the GET functions without a bench scenario (ids that name nothing). */
const COLD_START_QUERIES: Record<string, Record<string, string>> = {
  exportHl7LabResult: { resultId: 'lr_bench-unknown' },
  fhirObservationSearch: { patient: DEMO.patientId },
};

/** `{heldId}`, `{packetId}`, `{id}`: ids of the right shape that name nothing. */
function placeholderPathParameters(pathTemplate: string): Record<string, string> | undefined {
  const names = [...pathTemplate.matchAll(/\{(\w+)\+?\}/g)].map((m) => m[1]!);
  if (!names.length) return undefined;
  const value = (param: string) =>
    param === 'packetId' ? 'fp_0123456789abcdef0123456789abcdef' : param === 'id' ? `${DEMO.patientId}..bench-unknown` : 'bench-unknown';
  return Object.fromEntries(names.map((n) => [n, value(n)]));
}

export function coldEvent(name: string): unknown {
  if (name === AuthorizerFunction.name) {
    const note = HttpEndpoints.find((e) => e.name === 'exportHl7Note')!;
    return authorizerEvent(proxyEvent(note, scenarioFor('exportHl7Note')!.request(0), BENCH_KEYS.export.secret));
  }
  const scenario = scenarioFor(name);
  const endpoint = HttpEndpoints.find((e) => e.name === name);
  if (endpoint) {
    // Measurement fix (issue 31 item 5): every HTTP function gets a request its authorizer allowed
    // with the route's own scope (as the authorizer grants it: inbox:review implies inbox:read),
    // so the invocation passes access control and runs to its first SDK call. Before, functions
    // without a bench scenario got `{}` and stopped at 401, and scenario keys lacking an implied
    // scope at 403: no init time. Path parameters without a scenario get a well-formed unknown id.
    const key: BenchKey = scenario?.key ?? { secret: 'bench-cold-start-key', partnerId: 'demo-staff', scopes: [] };
    const spec = scenario?.request(0) ?? { pathParameters: placeholderPathParameters(endpoint.path), query: COLD_START_QUERIES[name] };
    const event = proxyEvent(endpoint, spec, key.secret);
    event.requestContext.authorizer = {
      ...allowContext({ ...key, scopes: [...new Set([...key.scopes, ...routeScopes(endpoint)])] }),
      principalId: 'key_bench',
    };
    return event;
  }
  switch (name) {
    case 'matchFormPackets':
      return sqsEvent('form-matching', { v: 1, packetId: 'fp_0123456789abcdef0123456789abcdef' });
    // measurement fix (issue 31 item 5): the webhook workers got `{}` and returned before any SDK call
    case 'fanOutWebhookEvents':
      return sqsEvent('result-notifications', {
        type: 'lab-result.saved',
        schemaVersion: 1,
        notificationId: 'nt_bench',
        resultId: 'lr_bench',
        versionId: 'v_bench',
        status: 'final',
        partnerId: 'demo-lab',
      });
    case 'deliverWebhooks':
      return sqsEvent('webhook-deliveries', { v: 1, deliveryId: 'dl_bench' });
    default:
      return {}; // scheduled functions
  }
}

/** One SQS record of `queue` (its base name) carrying `body`, as Lambda's event source mapping delivers it. */
function sqsEvent(queue: string, body: unknown): unknown {
  return {
    Records: [
      {
        messageId: '059f36b4-87a3-44ab-83d2-661975830a7d',
        receiptHandle: 'AQEBwJnKyrHigUMZj6rYigCgxlaS3SLy0a',
        body: JSON.stringify(body),
        attributes: {
          ApproximateReceiveCount: '1',
          SentTimestamp: String(Date.now()),
          SenderId: 'AIDAIENQZJOLO23YVJ4VO',
          ApproximateFirstReceiveTimestamp: String(Date.now()),
        },
        messageAttributes: {},
        md5OfBody: 'e4e68fb7bd0e697a0ae8f1bb342846b3',
        eventSource: 'aws:sqs',
        eventSourceARN: `arn:aws:sqs:us-east-1:000000000000:interop-bench-${queue}`,
        awsRegion: 'us-east-1',
      },
    ],
  };
}

/**
 * The staff sign-in settings infra/interop-stack.ts gives the authorizer and every route with
 * `staffSignIn` (infra/staff-sign-in.ts: the Cognito user pool's endpoints): without them
 * serveInboxPage answers 503 and serves no page. Values of the same shape; nothing is fetched from
 * them on the cold-start request (the page only embeds them; the authorizer's request has an API key).
 */
const STAFF_SIGN_IN: Partial<Record<Env, string>> = {
  [Env.staffIssuer]: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_bench',
  [Env.staffClientId]: 'interop-bench-inbox',
  [Env.staffJwksUri]: 'https://cognito-idp.us-east-1.amazonaws.com/us-east-1_bench/.well-known/jwks.json',
  [Env.staffAuthorizeUrl]: 'https://interop-bench.auth.us-east-1.amazoncognito.com/oauth2/authorize',
  [Env.staffTokenUrl]: 'https://interop-bench.auth.us-east-1.amazoncognito.com/oauth2/token',
  [Env.staffLogoutUrl]: 'https://interop-bench.auth.us-east-1.amazoncognito.com/logout',
  [Env.staffScopes]: 'openid profile',
};

/** A clean environment as the deployed function would have it; every endpoint points at a closed port. */
export function childEnv(): NodeJS.ProcessEnv {
  const closed = 'http://127.0.0.1:9';
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_OPTIONS: '--enable-source-maps --no-warnings',
    AWS_REGION: 'us-east-1',
    AWS_ACCESS_KEY_ID: 'bench',
    AWS_SECRET_ACCESS_KEY: 'bench',
    AWS_ENDPOINT_URL_DYNAMODB: closed,
    AWS_ENDPOINT_URL_KMS: closed,
    AWS_ENDPOINT_URL_SQS: closed,
    AWS_ENDPOINT_URL_S3: closed,
    [Env.stage]: 'bench',
    [Env.logLevel]: 'info',
    [Env.kmsKeyId]: 'alias/interop-bench',
    [Env.documentsBucket]: 'interop-bench-documents',
    [Env.hl7SendingApplication]: 'INTEROP',
    [Env.hl7SendingFacility]: 'DEMO-HOSP',
  };
  for (const t of Object.values(Tables)) env[t.env] = `interop-bench-${t.baseName}`;
  for (const q of Object.values(Queues)) env[q.env] = `${closed}/000000000000/interop-bench-${q.baseName}`;
  return env;
}

/** childEnv() plus what infra adds to this function alone (the staff sign-in settings). */
export function functionEnv(base: NodeJS.ProcessEnv, name: string): NodeJS.ProcessEnv {
  const staffSignIn = name === AuthorizerFunction.name || HttpEndpoints.some((e) => e.name === name && 'staffSignIn' in e && e.staffSignIn);
  return staffSignIn ? { ...base, ...STAFF_SIGN_IN } : base;
}

export interface ChildResult {
  importMs: number;
  firstCallMs: number | null;
  invokeMs: number | null;
  /** import() + the whole invocation, when it returned without an SDK call */
  responseMs: number | null;
  bootMs: number;
  reason: string;
  target?: string;
  status?: number;
  error?: string;
}

function runChild(harness: string, bundleFile: string, eventFile: string, env: NodeJS.ProcessEnv): Promise<ChildResult> {
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [harness, bundleFile, eventFile], { env, maxBuffer: 16 * 1024 * 1024, timeout: 30_000 }, (error, stdout, stderr) => {
      const line = stdout.split('\n').find((l) => l.startsWith('BENCH_RESULT '));
      if (!line) {
        reject(new Error(`cold start child failed for ${bundleFile}: ${error?.message ?? ''} ${stderr.slice(0, 500)}`));
        return;
      }
      resolve(JSON.parse(line.slice('BENCH_RESULT '.length)) as ChildResult);
    });
  });
}

/** The SDK calls of one function's cold invocation, recorded in a fresh process (bench/cold-start-record.ts). */
function recordCalls(script: string, root: string, name: string, eventFile: string, env: NodeJS.ProcessEnv): Promise<CallRecord[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', script, name, eventFile],
      { env: { ...env, NODE_OPTIONS: '--no-warnings' }, cwd: root, maxBuffer: 64 * 1024 * 1024, timeout: 60_000 },
      (error, stdout, stderr) => {
        const line = stdout.split('\n').find((l) => l.startsWith('BENCH_CALLS '));
        if (!line) {
          reject(new Error(`recording ${name} failed: ${error?.message ?? ''} ${stderr.slice(0, 500)}`));
          return;
        }
        resolve(decodeCalls(line.slice('BENCH_CALLS '.length)));
      },
    );
  });
}

// ---------------------------------------------------------------- measurement

/**
 * Where an init measurement ends: at the first SDK HTTP request, or (a function whose invocation
 * makes none) at the handler's returned response.
 */
export type InitEnd = 'first-sdk-call' | 'response';

export interface TimingSummary {
  runs: number;
  importMs: number;
  /** median import() + invocation up to the first SDK request (null unless every run reached one) */
  firstCallMs: number | null;
  /** median import() + whole invocation up to its response (null unless every run returned without an SDK call, status below 500) */
  responseMs: number | null;
  /** the init figure compared with the floor: firstCallMs, or responseMs for a function that made no SDK call */
  initMs: number | null;
  initEnd: InitEnd | null;
  /** reason of the last run: sdk-call when the invocation reached an SDK call */
  reachedSdkCall: boolean;
  firstCallTarget?: string;
  /** HTTP status of the response (init to response only) */
  responseStatus?: number;
}

export interface FunctionColdStart {
  name: string;
  kind: 'authorizer' | 'http' | 'queue' | 'schedule';
  needs: BundleClientId[];
  /** the floor its ratios are over: its per-function floor, or its client floor when its invocation makes no SDK call */
  floor: string;
  floorKind: FloorColdStart['kind'];
  /** the SDK calls its cold invocation starts before any answers ("33×Query(forms)"), or "no SDK call" */
  firstBurst: string;
  /** set when the floor's first outgoing request is not the function's (the recording missed something) */
  firstRequestDiffers?: string;
  /** the SDK-client floor of its needs (one GetItem; the gate before issue 31's per-function floors), and the ratios over it */
  clientFloor: string;
  clientFloorRatios: { size: number; initMs: number | null };
  bundle: BundleInfo;
  timing: TimingSummary;
  /** initMs: the function's init (to its first SDK call, or to its response when it makes none) over the floor's init */
  ratios: { size: number; gzip: number; importMs: number; firstCallMs: number | null; initMs: number | null };
  /** SDK clients in the bundle that `needs` does not list */
  extraClients: BundleClientId[];
  /**
   * SDK clients in the bundle the function can never call: DynamoDB when `needs` grants no table
   * (its IAM role has no table action; the floor still counts DynamoDB, which every floor builds)
   */
  uncalledClients: BundleClientId[];
  /** packages whose bytes exceed the floor's, largest first (KB) */
  excessByPackage: Array<{ pkg: string; kb: number }>;
  meetsTarget: boolean;
  /**
   * its own code beside the SDK code in its bundle and what lib/config/bundle-budgets.ts allows it
   * (its named budget, or the default share): the rule test/bundle-budgets.test.ts holds it to
   */
  ownCode?: { ownBytes: number; sdkBytes: number; allowedBytes: number; namedBudget: boolean; within: boolean };
}

export interface FloorColdStart {
  id: string;
  /**
   * calls: a function's own floor (its clients, its Command classes, its first burst of calls);
   * clients: the SDK-client floor of a client set (its clients, one GetItem)
   */
  kind: 'calls' | 'clients';
  clients: BundleClientId[];
  /**
   * the bytes its size ratio divides by: a calls floor without its own entry module (the recorded
   * inputs written out as literals, which the function computes in code it is charged for: 33 Query
   * inputs are kilobytes), so only SDK code is the floor; a clients floor whole, as before
   */
  sizeBytes: number;
  /** calls floors: the Command classes imported and the burst sent */
  commands?: string[];
  burst?: string;
  burstCalls?: number;
  bundle: BundleInfo;
  timing: TimingSummary;
}

export interface ColdStartResult {
  method: string;
  runsPerBundle: number;
  target: number;
  functions: FunctionColdStart[];
  floors: FloorColdStart[];
  notMeasured: Array<{ name: string; reason: string }>;
  /** bundles of an earlier build (option baselineDir) measured in the same rounds, against the same floors */
  baseline?: Array<{
    name: string;
    timing: TimingSummary;
    initRatio: number | null;
    /** median over rounds of today's init / the baseline's init in the same round (load drift cancels) */
    pairedInitRatio: number | null;
  }>;
}

/**
 * Which responses without an SDK call count as "init to response": only those of a function whose
 * `needs` grant it no client it could call, with the status its route answers (200, or the unknown
 * FHIR route's 404). A function that may call AWS and answered without doing so (e.g. its bench
 * event was refused early) is not measured, so a broken scenario cannot pass on a short figure.
 */
export function responseMeasurable(name: string, needs: ResourceNeeds): (status: number | undefined) => boolean {
  if (callableClients(needs).length > 0) return () => false;
  const expected = name === 'fhirRouteNotFound' ? 404 : 200;
  return (status) => status === expected;
}

export function summarizeRuns(results: ChildResult[], measurableResponse: (status: number | undefined) => boolean = () => true): TimingSummary {
  const reached = results.filter((r) => r.reason === 'sdk-call');
  // a response without any SDK call is a measurement only when the function served (below 500) as its route answers
  const served = results.filter(
    (r) => r.reason === 'returned-without-sdk-call' && r.responseMs !== null && (r.status ?? 0) < 500 && measurableResponse(r.status),
  );
  const last = results[results.length - 1];
  const firstCallMs = results.length && reached.length === results.length ? round(median(reached.map((r) => r.firstCallMs!)), 2) : null;
  const responseMs = results.length && served.length === results.length ? round(median(served.map((r) => r.responseMs!)), 2) : null;
  return {
    runs: results.length,
    importMs: round(median(results.map((r) => r.importMs)), 2),
    firstCallMs,
    responseMs,
    initMs: firstCallMs ?? responseMs,
    initEnd: firstCallMs !== null ? 'first-sdk-call' : responseMs !== null ? 'response' : null,
    ...(responseMs !== null && last?.status !== undefined ? { responseStatus: last.status } : {}),
    reachedSdkCall: reached.length === results.length,
    firstCallTarget: last
      ? last.reason === 'sdk-call'
        ? `${last.target}`
        : `${last.reason}${last.status ? ` (status ${last.status})` : ''}${last.error ? ` (${last.error})` : ''}`
      : undefined,
  };
}

function kindOf(name: string): FunctionColdStart['kind'] {
  if (name === AuthorizerFunction.name) return 'authorizer';
  if (HttpEndpoints.some((e) => e.name === name)) return 'http';
  return BackgroundFunctions.find((f) => f.name === name)!.kind;
}

/** SDK clients a function may call at all: DynamoDB only with a table in `needs`, the others as clientsFromNeeds. */
export function callableClients(needs: ResourceNeeds): BundleClientId[] {
  const tables = Object.values(needs.tables ?? {}).some((ops) => (ops?.length ?? 0) > 0);
  return clientsFromNeeds(needs).filter((c) => c !== 'dynamodb' || tables);
}

export async function measureColdStart(options: {
  root: string;
  workDir: string;
  runs: number;
  target: number;
  progress: (line: string) => void;
  /** only these functions (and their floors); all when absent */
  only?: readonly string[];
  /**
   * A work directory of an earlier run (tsx bench/cold-start.ts --keep <dir>): its bundles of the
   * same functions are run interleaved with today's, with today's events (before/after in one run)
   */
  baselineDir?: string;
}): Promise<ColdStartResult> {
  const { root, workDir, runs, progress } = options;
  const harness = path.join(root, 'bench', 'cold-start-child.mjs');
  const env = childEnv();
  const unknown = (options.only ?? []).filter((n) => !functionNames().includes(n));
  if (unknown.length) throw new Error(`unknown function(s): ${unknown.join(', ')}`);
  const names = functionNames().filter((n) => !options.only || options.only.includes(n));

  progress(`  bundling ${names.length} functions with LAMBDA_BUNDLE_OPTIONS`);
  const bundles = new Map<string, { file: string; info: BundleInfo; event: string }>();
  mkdirSync(path.join(workDir, 'events'), { recursive: true });
  const notMeasured: Array<{ name: string; reason: string }> = [];
  for (const name of names) {
    const source = path.join(root, 'functions', `${name}.ts`);
    if (!existsSync(source)) {
      notMeasured.push({ name, reason: 'not measured (endpoint missing): functions/' + name + '.ts does not exist' });
      continue;
    }
    const file = path.join(workDir, 'functions', name, 'index.mjs');
    try {
      const info = await bundle(root, file, { file: source });
      const eventFile = path.join(workDir, 'events', `${name}.json`);
      writeFileSync(eventFile, JSON.stringify(coldEvent(name)));
      bundles.set(name, { file, info, event: eventFile });
    } catch (error) {
      notMeasured.push({ name, reason: `not measured (bundle failed): ${(error as Error).message.split('\n')[0]}` });
    }
  }

  // the old SDK-client floors (one per client set, one GetItem): reported beside, no longer the gate
  const clientFloorIds = new Map<string, BundleClientId[]>();
  for (const name of bundles.keys()) {
    const clients = clientsFromNeeds(needsOf(name));
    clientFloorIds.set(clients.join('+'), clients);
  }
  // the per-function floors: the SDK doing what the function's cold invocation does (bench/cold-start-floor.ts)
  progress(`  recording the first SDK burst of each function's cold invocation (one process each)`);
  const recordScript = path.join(root, 'bench', 'cold-start-record.ts');
  const callFloorOf = new Map<string, { id: string; burst: BurstCall[] }>();
  const callFloorSpecs = new Map<string, CallFloorSpec>();
  for (const [name, b] of bundles) {
    let calls: CallRecord[];
    try {
      calls = await recordCalls(recordScript, root, name, b.event, functionEnv(env, name));
    } catch (error) {
      progress(`    ${name}: recording failed (${(error as Error).message.slice(0, 200)}); held to its client floor`);
      continue;
    }
    const burst = firstBurst(calls);
    if (!burst.length) continue; // no SDK call on its path: held to its client floor (init to response)
    const clients = clientsFromNeeds(needsOf(name));
    // only the command modules its needs let it send (they list exactly what its code sends): a command
    // bundled but never sent, or of a client outside `needs`, is the function's excess, not its floor
    const sendable = commandsOfNeeds(needsOf(name));
    const commands = b.info.sdkCommands.filter((c) => clients.includes(c.split(':')[0] as BundleClientId) && sendable.has(c));
    const spec: CallFloorSpec = { clients, commands, burst };
    try {
      callFloorSource(spec);
    } catch (error) {
      progress(`    ${name}: no per-function floor (${(error as Error).message}); held to its client floor`);
      continue;
    }
    const id = callFloorId(spec);
    callFloorSpecs.set(id, spec);
    callFloorOf.set(name, { id, burst });
  }
  progress(
    `  bundling ${clientFloorIds.size} client floors (${[...clientFloorIds.keys()].join(', ')}) and ${callFloorSpecs.size} per-function floors: ${[...callFloorSpecs.keys()].join('; ')}`,
  );
  const floors = new Map<string, { file: string; info: BundleInfo; event: string; kind: FloorColdStart['kind'] }>();
  const floorEvent = path.join(workDir, 'events', 'floor.json');
  writeFileSync(floorEvent, '{}');
  let n = 0;
  for (const [id, clients] of clientFloorIds) {
    const file = path.join(workDir, 'floors', `clients-${id}`, 'index.mjs');
    const info = await bundle(root, file, { source: clientFloorSource(clients), name: `floor-${id}` });
    floors.set(id, { file, info, event: floorEvent, kind: 'clients' });
  }
  for (const [id, spec] of callFloorSpecs) {
    const file = path.join(workDir, 'floors', `calls-${++n}`, 'index.mjs');
    const info = await bundle(root, file, { source: callFloorSource(spec), name: `floor-calls-${n}` });
    floors.set(id, { file, info, event: floorEvent, kind: 'calls' });
  }

  const jobs = [
    ...[...bundles].map(([name, b]) => ({ key: `fn:${name}`, env: functionEnv(env, name), ...b })),
    ...[...floors].map(([id, b]) => ({ key: `floor:${id}`, env, ...b })),
    ...(options.baselineDir
      ? [...bundles]
          .map(([name, b]) => ({
            key: `base:${name}`,
            env: functionEnv(env, name),
            ...b,
            file: path.join(options.baselineDir!, 'functions', name, 'index.mjs'),
          }))
          .filter((j) => existsSync(j.file))
      : []),
  ];
  const results = new Map<string, ChildResult[]>(jobs.map((j) => [j.key, []]));
  progress(`  ${runs} cold starts (+1 discarded warm-up) of each of ${jobs.length} bundles, interleaved, NODE_OPTIONS=${env.NODE_OPTIONS}`);
  for (let round = 0; round <= runs; round++) {
    // rotate the order each round so no bundle always runs right after the same one
    const order = jobs.map((_, i) => jobs[(i + round * 5) % jobs.length]!);
    for (const job of order) {
      const r = await runChild(harness, job.file, job.event, job.env);
      if (round > 0) results.get(job.key)!.push(r);
    }
    if (round > 0 && (round % 5 === 0 || round === runs)) progress(`    round ${round}/${runs}`);
  }

  const floorResults: FloorColdStart[] = [...floors].map(([id, b]) => {
    const spec = callFloorSpecs.get(id);
    return {
      id,
      kind: b.kind,
      clients: spec?.clients ?? clientFloorIds.get(id)!,
      ...(spec ? { commands: spec.commands, burst: describeBurst(spec.burst), burstCalls: spec.burst.length } : {}),
      sizeBytes: spec ? b.info.bytes - (b.info.byPackage[APP_PACKAGE] ?? 0) : b.info.bytes,
      bundle: b.info,
      timing: summarizeRuns(results.get(`floor:${id}`)!),
    };
  });
  const ratiosOver = (fn: { info: BundleInfo; timing: TimingSummary }, floor: FloorColdStart) => ({
    size: round(fn.info.bytes / floor.sizeBytes, 3),
    gzip: round(fn.info.gzipBytes / floor.bundle.gzipBytes, 3),
    importMs: round(fn.timing.importMs / floor.timing.importMs, 3),
    firstCallMs: fn.timing.firstCallMs !== null && floor.timing.firstCallMs !== null ? round(fn.timing.firstCallMs / floor.timing.firstCallMs, 3) : null,
    initMs: fn.timing.initMs !== null && floor.timing.initMs !== null ? round(fn.timing.initMs / floor.timing.initMs, 3) : null,
  });
  const functions: FunctionColdStart[] = [...bundles.keys()].map((name) => {
    const b = bundles.get(name)!;
    const needs = clientsFromNeeds(needsOf(name));
    const clientFloorId = needs.join('+');
    const clientFloor = floorResults.find((f) => f.id === clientFloorId)!;
    const callFloor = callFloorOf.get(name);
    const floor = callFloor ? floorResults.find((f) => f.id === callFloor.id)! : clientFloor;
    const timing = summarizeRuns(results.get(`fn:${name}`)!, responseMeasurable(name, needsOf(name)));
    const excess = Object.entries(b.info.byPackage)
      // a calls floor's own entry (its recorded inputs) is not SDK code: all the function's app code is excess
      .map(([pkg, bytes]) => ({ pkg, kb: round((bytes - (floor.kind === 'calls' && pkg === APP_PACKAGE ? 0 : (floor.bundle.byPackage[pkg] ?? 0))) / 1024, 1) }))
      .filter((e) => e.kb >= 1)
      .sort((a, c) => c.kb - a.kb);
    const ratios = ratiosOver({ info: b.info, timing }, floor);
    const old = ratiosOver({ info: b.info, timing }, clientFloor);
    const extraClients = b.info.sdkClients.filter((c) => !needs.includes(c));
    const callable = callableClients(needsOf(name));
    const uncalledClients = b.info.sdkClients.filter((c) => needs.includes(c) && !callable.includes(c));
    return {
      name,
      kind: kindOf(name),
      needs,
      floor: floor.id,
      floorKind: floor.kind,
      firstBurst: callFloor ? describeBurst(callFloor.burst) : 'no SDK call',
      ...(callFloor && timing.firstCallTarget !== floor.timing.firstCallTarget
        ? { firstRequestDiffers: `function ${timing.firstCallTarget ?? '?'}, floor ${floor.timing.firstCallTarget ?? '?'}` }
        : {}),
      clientFloor: clientFloorId,
      clientFloorRatios: { size: old.size, initMs: old.initMs },
      bundle: b.info,
      timing,
      ratios,
      extraClients,
      uncalledClients,
      excessByPackage: excess,
      meetsTarget:
        ratios.size <= options.target && ratios.initMs !== null && ratios.initMs <= options.target && extraClients.length === 0 && uncalledClients.length === 0,
    };
  });
  // own code vs SDK code in each bundle (lib/config/bundle-budgets.ts), as test/bundle-budgets.test.ts weighs it
  const sdk = sdkPackages(options.root);
  const weights = new Map(functions.map((fn) => [fn.name, weighBundle(fn.bundle.byPackage, sdk)]));
  const smallestSdk = Math.min(...[...weights.values()].map((w) => w.sdk).filter((b) => b > 0));
  for (const fn of functions) {
    const w = weights.get(fn.name)!;
    const allowedBytes = ownCodeAllowance(fn.name, w, smallestSdk);
    fn.ownCode = { ownBytes: w.own, sdkBytes: w.sdk, allowedBytes, namedBudget: fn.name in OwnCodeBudgets, within: w.own <= allowedBytes };
  }
  const baseline = options.baselineDir
    ? [...bundles.keys()]
        .filter((name) => results.has(`base:${name}`))
        .map((name) => {
          const timing = summarizeRuns(results.get(`base:${name}`)!, responseMeasurable(name, needsOf(name)));
          const floor = floorResults.find((f) => f.id === functions.find((x) => x.name === name)!.floor)!;
          const initOf = (r: ChildResult) => r.firstCallMs ?? r.responseMs;
          const today = results.get(`fn:${name}`)!;
          const pairs = results
            .get(`base:${name}`)!
            .map((b, i) => (initOf(b) && today[i] && initOf(today[i]!) ? initOf(today[i]!)! / initOf(b)! : null))
            .filter((x): x is number => x !== null);
          return {
            name,
            timing,
            initRatio: timing.initMs !== null && floor.timing.initMs !== null ? round(timing.initMs / floor.timing.initMs, 3) : null,
            pairedInitRatio: pairs.length ? round(median(pairs), 3) : null,
          };
        })
    : undefined;
  return {
    ...(baseline ? { baseline } : {}),
    method:
      "floor per function = its needs' clients + its bundle's Command classes + the first burst of SDK calls its own cold invocation starts (recorded), sent at once, stopped at the first request (the one-GetItem client floor reported beside); esbuild with LAMBDA_BUNDLE_OPTIONS (scripts/build.ts); gzip = zlib level 6 of the .mjs; init = median over fresh node processes of import() + one invocation up to the first SDK HTTP request (no network), or, for a function whose invocation makes no SDK call, up to its returned response (\"init to response\", only for a function with no callable client answering with its route's status; anything else is no measurement); every HTTP function is invoked with a request its authorizer allowed with the route scope (its bench scenario where it has one); NODE_OPTIONS --enable-source-maps as deployed (--no-warnings only silences the AWS SDK node-20 notice printed locally)",
    runsPerBundle: runs,
    target: options.target,
    functions,
    floors: floorResults,
    notMeasured,
  };
}

/**
 * `npx tsx bench/cold-start.ts --only a,b [--runs 12] [--keep <dir>] [--baseline <dir>]`: the
 * cold-start measurement of the named functions and their floors alone (same method as npm run
 * bench, section 1), one line per bundle. `--keep` leaves the bundles in <dir> (e.g. for node
 * --cpu-prof on one of them); `--baseline <dir>` (an earlier --keep) runs those bundles too, in the
 * same rounds: before and after a change on one machine state.
 */
async function cli(argv: string[]): Promise<number> {
  const arg = (flag: string) => {
    const i = argv.indexOf(flag);
    return i >= 0 ? argv[i + 1] : undefined;
  };
  const only = arg('--only')
    ?.split(',')
    .map((n) => n.trim())
    .filter(Boolean);
  if (!only?.length) {
    process.stderr.write('usage: tsx bench/cold-start.ts --only <function>[,<function>...] [--runs 12] [--keep <dir>] [--baseline <dir>]\n');
    return 2;
  }
  const runs = Number(arg('--runs') ?? 12);
  const keep = arg('--keep');
  const baselineDir = arg('--baseline');
  const { mkdtempSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const workDir = keep ? path.resolve(keep) : mkdtempSync(path.join(os.tmpdir(), 'interop-cold-start-'));
  try {
    const result = await measureColdStart({
      root: path.resolve(__dirname, '..'),
      workDir,
      runs,
      target: 1.15,
      only,
      ...(baselineDir ? { baselineDir: path.resolve(baselineDir) } : {}),
      progress: (line) => process.stderr.write(`${line}\n`),
    });
    for (const floor of result.floors)
      process.stdout.write(
        `floor (${floor.kind}) ${floor.id}: ${(floor.bundle.bytes / 1024).toFixed(1)} KB  import ${floor.timing.importMs} ms  init ${floor.timing.initMs} ms to ${floor.timing.firstCallTarget}\n`,
      );
    for (const x of result.functions) {
      const end = x.timing.initEnd === 'response' ? `to response (status ${x.timing.responseStatus})` : `to ${x.timing.firstCallTarget}`;
      process.stdout.write(
        `${x.name.padEnd(26)} ${(x.bundle.bytes / 1024).toFixed(1)} KB (${x.ratios.size}x)  import ${x.timing.importMs} ms (${x.ratios.importMs}x)  init ${x.timing.initMs ?? 'n/a'} ms (${x.ratios.initMs ?? 'n/a'}x) ${end}` +
          `  [client floor ${x.clientFloor}: ${x.clientFloorRatios.size}x size, ${x.clientFloorRatios.initMs ?? 'n/a'}x init]` +
          `${x.firstRequestDiffers ? `  FIRST REQUEST DIFFERS: ${x.firstRequestDiffers}` : ''}` +
          `${x.uncalledClients.length ? `  never calls: ${x.uncalledClients.join(', ')}` : ''}${x.extraClients.length ? `  not in needs: ${x.extraClients.join(', ')}` : ''}\n`,
      );
    }
    for (const b of result.baseline ?? [])
      process.stdout.write(
        `${`${b.name} (baseline)`.padEnd(37)} init ${b.timing.initMs ?? 'n/a'} ms (${b.initRatio ?? 'n/a'}x); today / baseline, same round, median: ${b.pairedInitRatio ?? 'n/a'}\n`,
      );
    return 0;
  } finally {
    if (!keep) rmSync(workDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  cli(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`cold-start: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
