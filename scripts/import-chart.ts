/**
 * `npm run import -- FILE [--dry-run]`: load a chart import document (docs/chart-import.md,
 * schemas/chart-import.schema.json) into the chart table.
 *
 * Validates first: when anything is wrong it prints every failing JSON pointer and exits 1 with
 * nothing written. Prints counts only, never chart content.
 *
 * Target: AWS_ENDPOINT_URL_DYNAMODB + CHART_TABLE from the environment (a deployed stage needs only
 * CHART_TABLE and the usual AWS credentials/region); otherwise the running local stack, from
 * .local/endpoints.json (written by `npm start`).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { Env } from '../lib/config/service';
import { importChart, validateChartImport } from '../lib/chart/chart-import';
import { ChartStore } from '../lib/chart/chart-store';
import { DependencyUnavailableError } from '../lib/http/problem';

const DEFAULT_ENDPOINTS_FILE = path.resolve(__dirname, '..', '.local', 'endpoints.json');
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface ImportTarget {
  table: string;
  /** DynamoDB endpoint override; undefined means the AWS default for the region */
  endpoint?: string;
  region?: string;
  source: 'environment' | 'local stack';
}

export interface CliIo {
  env: NodeJS.ProcessEnv;
  out: (line: string) => void;
  err: (line: string) => void;
  endpointsFile?: string;
}

export class MissingTargetError extends Error {
  override readonly name = 'MissingTargetError';
}

/** Where to import: the environment when CHART_TABLE is set, else the local stack's endpoints file. */
export function resolveTarget(env: NodeJS.ProcessEnv, endpointsFile: string = DEFAULT_ENDPOINTS_FILE): ImportTarget {
  const envTable = env[Env.chartTable] || undefined;
  const envEndpoint = env.AWS_ENDPOINT_URL_DYNAMODB || undefined;
  if (envTable) return { table: envTable, endpoint: envEndpoint, region: env.AWS_REGION || undefined, source: 'environment' };
  const shown = path.relative(process.cwd(), endpointsFile) || endpointsFile;
  if (!existsSync(endpointsFile)) {
    throw new MissingTargetError(
      envEndpoint
        ? `AWS_ENDPOINT_URL_DYNAMODB is set but ${Env.chartTable} is not: set ${Env.chartTable} too, or run \`npm start\` first so that ${shown} exists`
        : `no chart table to import into: run \`npm start\` first (it writes ${shown}), or set AWS_ENDPOINT_URL_DYNAMODB and ${Env.chartTable}`,
    );
  }
  let file: { dynamodb?: unknown; region?: unknown; tables?: { chart?: unknown } };
  try {
    file = JSON.parse(readFileSync(endpointsFile, 'utf8'));
  } catch {
    throw new MissingTargetError(`${shown} is not readable JSON: restart the local stack with \`npm start\``);
  }
  const table = typeof file.tables?.chart === 'string' ? file.tables.chart : undefined;
  const endpoint = envEndpoint ?? (typeof file.dynamodb === 'string' ? file.dynamodb : undefined);
  if (!table || !endpoint) throw new MissingTargetError(`${shown} has no DynamoDB endpoint or chart table: restart the local stack with \`npm start\``);
  return { table, endpoint, region: env.AWS_REGION || (typeof file.region === 'string' ? file.region : undefined), source: 'local stack' };
}

function isLocalEndpoint(endpoint: string | undefined): boolean {
  if (!endpoint) return false;
  try {
    return LOCAL_HOSTS.has(new URL(endpoint).hostname);
  } catch {
    return false;
  }
}

/** A client for the target; a local endpoint gets placeholder credentials when none are configured. */
export function clientFor(target: ImportTarget, env: NodeJS.ProcessEnv): DynamoDBClient {
  const local = isLocalEndpoint(target.endpoint);
  return new DynamoDBClient({
    endpoint: target.endpoint,
    region: target.region ?? (local ? 'us-east-1' : undefined),
    maxAttempts: 5,
    ...(local && !env.AWS_ACCESS_KEY_ID ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  });
}

const USAGE = 'usage: npm run import -- FILE [--dry-run]';

type CliArgs = { file?: string; dryRun: boolean; help: boolean } | { error: string };

function parseCliArgs(argv: string[]): CliArgs {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
    if (!values.help && positionals.length !== 1) return { error: USAGE };
    return { file: positionals[0], dryRun: values['dry-run'] ?? false, help: values.help ?? false };
  } catch (error) {
    return { error: `${(error as Error).message}\n${USAGE}` };
  }
}

/** The CLI without process globals; returns the exit code (0 ok, 1 failed, 2 usage). */
export async function runImportChart(argv: string[], io: CliIo): Promise<number> {
  const args = parseCliArgs(argv);
  if ('error' in args) {
    io.err(args.error);
    return 2;
  }
  if (args.help || !args.file) {
    io.out(USAGE);
    return 0;
  }
  const file = args.file;

  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    io.err(`${file}: cannot read (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    return 1;
  }
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    // the parser's own message quotes the file's content, which is chart data: not printed
    io.err(`${file}: not valid JSON; nothing was written`);
    return 1;
  }

  const validation = validateChartImport(doc);
  if (!validation.ok) {
    io.err(`${file}: ${validation.errors.length} problem${validation.errors.length === 1 ? '' : 's'}; nothing was written`);
    for (const { pointer, message } of validation.errors) io.err(`  ${pointer || '(document)'}: ${message}`);
    return 1;
  }
  if (args.dryRun) {
    const p = validation.value.patients;
    io.out(`${file}: valid (${p.length} patients, ${p.reduce((n, x) => n + (x.encounters?.length ?? 0), 0)} encounters, ${p.reduce((n, x) => n + (x.notes?.length ?? 0), 0)} notes, ${p.reduce((n, x) => n + (x.assessments?.length ?? 0), 0)} assessments); dry run, nothing written`);
    return 0;
  }

  let target: ImportTarget;
  try {
    target = resolveTarget(io.env, io.endpointsFile);
  } catch (error) {
    if (error instanceof MissingTargetError) {
      io.err(error.message);
      return 1;
    }
    throw error;
  }

  const db = clientFor(target, io.env);
  try {
    const result = await importChart(new ChartStore(db, target.table), validation.value);
    if (!result.ok) throw new Error('validated document failed validation'); // unreachable: validated above
    const c = result.counts;
    io.out(`imported ${c.patients} patients, ${c.encounters} encounters, ${c.notes} notes, ${c.assessments} assessments (${c.items} items) into ${target.table} (${target.source})`);
    return 0;
  } catch (error) {
    const name = (error as Error).name;
    if (error instanceof DependencyUnavailableError) {
      io.err(`DynamoDB at ${target.endpoint ?? 'the AWS default endpoint'} is unavailable or throttling; nothing or only part was written (re-running is safe).${target.source === 'local stack' ? ' Is `npm start` running?' : ''}`);
    } else if (name === 'ResourceNotFoundException') {
      io.err(`table ${target.table} does not exist${target.source === 'local stack' ? ': run `npm start` first' : ''}`);
    } else {
      io.err(`import failed (${name}); re-running is safe, every write is an upsert`);
    }
    return 1;
  } finally {
    db.destroy();
  }
}

if (require.main === module) {
  runImportChart(process.argv.slice(2), {
    env: process.env,
    out: (line) => process.stdout.write(line + '\n'),
    err: (line) => process.stderr.write(line + '\n'),
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`import failed (${(error as Error)?.name ?? 'error'})\n`);
      process.exitCode = 1;
    },
  );
}
