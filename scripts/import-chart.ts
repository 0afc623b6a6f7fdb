/**
 * `npm run import -- FILE [--dry-run]`: load a chart import document (docs/chart-import.md,
 * schemas/chart-import.schema.json) into the chart table.
 *
 * Validates first: when anything is wrong it prints every failing JSON pointer and exits 1 with
 * nothing written. Prints counts only, never chart content.
 *
 * Every patient written is also (re-)indexed for form matching in the same command, through the
 * forms domain's ChartPatientWriter (a renamed patient or a changed birth date loses its old index
 * entries), so a form packet for an imported patient can be matched at once.
 *
 * Target: CHART_TABLE + FORMS_TABLE + RESULTS_TABLE + KMS_KEY_ID from the environment (a deployed stage: the usual
 * AWS credentials/region; AWS_ENDPOINT_URL_DYNAMODB / AWS_ENDPOINT_URL_KMS for other endpoints);
 * otherwise the running local stack, from .local/endpoints.json (written by `npm start`).
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { Env } from '../lib/config/service';
import { importChart, validateChartImport } from '../lib/chart/chart-import';
import { ChartStore } from '../lib/chart/chart-store';
import { DependencyUnavailableError } from '../lib/domain-errors';
import { KeyServiceError } from '../lib/crypto/errors';
import { ChartPatientWriter } from '../lib/forms/chart-patient-writer';
import { explicitFormsDependencies } from '../lib/forms/forms-wiring';
import { MrnIndex } from '../lib/intake/mrn-index';
import { MrnPatientIndex } from '../lib/intake/receive-hl7-wiring';
import { operatorName } from '../lib/admin/admin-audit';
import { relate, type PartnerPatientRelationship } from '../lib/relationships/relationships';
import { loadResultKeys } from '../lib/results/lookup-keys';
import { isConnectionRefused, LOCAL_STACK_NOT_RUNNING } from '../lib/admin/target';
import { quietAwsSdkNotice, type CliIo as TextIo } from '../lib/admin/cli-runner';

const defaultEndpointsFile = (env: NodeJS.ProcessEnv) => env.INTEROP_ENDPOINTS_FILE || path.resolve(__dirname, '..', '.local', 'endpoints.json');
const LOCAL_HOSTS = new Set(['127.0.0.1', 'localhost', '[::1]']);

export interface ImportTarget {
  table: string;
  /** the forms table, where the form-matching index lives */
  formsTable: string;
  /** the results table, where the lookup HMAC key of the HL7 intake's MRN index lives */
  resultsTable: string;
  /** the KMS key that wraps the match index's HMAC key */
  kmsKeyId: string;
  /** DynamoDB endpoint override; undefined means the AWS default for the region */
  endpoint?: string;
  /** KMS endpoint override */
  kmsEndpoint?: string;
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
export function resolveTarget(env: NodeJS.ProcessEnv, endpointsFile: string = defaultEndpointsFile(env)): ImportTarget {
  const envTable = env[Env.chartTable] || undefined;
  const envEndpoint = env.AWS_ENDPOINT_URL_DYNAMODB || undefined;
  const envKms = env.AWS_ENDPOINT_URL_KMS || undefined;
  if (envTable) {
    const formsTable = env[Env.formsTable] || undefined;
    const resultsTable = env[Env.resultsTable] || undefined;
    const kmsKeyId = env[Env.kmsKeyId] || undefined;
    if (!formsTable || !resultsTable || !kmsKeyId) {
      const missing = !formsTable ? Env.formsTable : !resultsTable ? Env.resultsTable : Env.kmsKeyId;
      throw new MissingTargetError(
        `${Env.chartTable} is set but ${missing} is not: the import keeps the form-matching index and the HL7 intake's MRN index in step, so it needs ${Env.formsTable}, ${Env.resultsTable} and ${Env.kmsKeyId} too`,
      );
    }
    return {
      table: envTable,
      formsTable,
      resultsTable,
      kmsKeyId,
      endpoint: envEndpoint,
      kmsEndpoint: envKms,
      region: env.AWS_REGION || undefined,
      source: 'environment',
    };
  }
  const shown = path.relative(process.cwd(), endpointsFile) || endpointsFile;
  if (!existsSync(endpointsFile)) {
    throw new MissingTargetError(
      envEndpoint
        ? `AWS_ENDPOINT_URL_DYNAMODB is set but ${Env.chartTable} is not: set ${Env.chartTable} (and ${Env.formsTable}, ${Env.resultsTable}, ${Env.kmsKeyId}) too, or run \`npm start\` first so that ${shown} exists`
        : LOCAL_STACK_NOT_RUNNING,
    );
  }
  let file: { dynamodb?: unknown; kms?: unknown; kmsKeyId?: unknown; region?: unknown; tables?: { chart?: unknown; forms?: unknown; results?: unknown } };
  try {
    file = JSON.parse(readFileSync(endpointsFile, 'utf8'));
  } catch {
    throw new MissingTargetError(`${shown} is not readable JSON: restart the local stack with \`npm start\``);
  }
  const str = (v: unknown) => (typeof v === 'string' && v.length > 0 ? v : undefined);
  const table = str(file.tables?.chart);
  const formsTable = str(file.tables?.forms);
  const resultsTable = str(file.tables?.results);
  const kmsKeyId = str(file.kmsKeyId);
  const endpoint = envEndpoint ?? str(file.dynamodb);
  const kmsEndpoint = envKms ?? str(file.kms);
  if (!table || !endpoint || !formsTable || !resultsTable || !kmsKeyId || !kmsEndpoint)
    throw new MissingTargetError(
      `${shown} lacks the DynamoDB or KMS endpoint, the chart, forms or results table or the key: restart the local stack with \`npm start\``,
    );
  return { table, formsTable, resultsTable, kmsKeyId, endpoint, kmsEndpoint, region: env.AWS_REGION || str(file.region), source: 'local stack' };
}

function isLocalEndpoint(endpoint: string | undefined): boolean {
  if (!endpoint) return false;
  try {
    return LOCAL_HOSTS.has(new URL(endpoint).hostname);
  } catch {
    return false;
  }
}

function clientConfig(endpoint: string | undefined, target: ImportTarget, env: NodeJS.ProcessEnv) {
  const local = isLocalEndpoint(endpoint);
  return {
    endpoint,
    region: target.region ?? (local ? 'us-east-1' : undefined),
    maxAttempts: 5,
    ...(local && !env.AWS_ACCESS_KEY_ID ? { credentials: { accessKeyId: 'local', secretAccessKey: 'local' } } : {}),
  };
}

/** A client for the target; a local endpoint gets placeholder credentials when none are configured. */
export function clientFor(target: ImportTarget, env: NodeJS.ProcessEnv): DynamoDBClient {
  return new DynamoDBClient(clientConfig(target.endpoint, target, env));
}

/** The KMS client for the match index key. */
export function kmsClientFor(target: ImportTarget, env: NodeJS.ProcessEnv): KMSClient {
  return new KMSClient(clientConfig(target.kmsEndpoint, target, env));
}

const USAGE = 'usage: npm run import -- FILE [--dry-run]';
/** a usage error: one line, and where help is (as every operator CLI) */
const usageError = (message: string) => `${message} (see \`npm run import -- --help\`)`;

type CliArgs = { file?: string; dryRun: boolean; help: boolean } | { error: string };

function parseCliArgs(argv: string[]): CliArgs {
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { 'dry-run': { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
    if (!values.help && positionals.length !== 1)
      return { error: usageError(positionals.length ? `one FILE, got ${positionals.length}` : 'give the FILE to import') };
    return { file: positionals[0], dryRun: values['dry-run'] ?? false, help: values.help ?? false };
  } catch (error) {
    return { error: usageError((error as Error).message.split('\n')[0]!) };
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
    io.out(
      `${file}: valid (${p.length} patients, ${p.reduce((n, x) => n + (x.encounters?.length ?? 0), 0)} encounters, ${p.reduce((n, x) => n + (x.notes?.length ?? 0), 0)} notes, ${p.reduce((n, x) => n + (x.assessments?.length ?? 0), 0)} assessments); dry run, nothing written`,
    );
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
  const kms = kmsClientFor(target, io.env);
  try {
    const forms = explicitFormsDependencies({ db, kms, kmsKeyId: target.kmsKeyId, formsTable: target.formsTable, chartTable: target.table });
    // the HL7 intake finds a patient of PID-3 through this index: an imported patient must be in it
    const mrnIndex = new MrnPatientIndex(
      async () => (await loadResultKeys({ db, table: target.resultsTable, kms, kmsKeyId: target.kmsKeyId }, { create: true }))!,
      new MrnIndex(db, target.table),
    );
    // relationships the document carries: the partners that serve its patients (source import, made by the operator)
    const relationships = {
      createdBy: operatorName(io.env),
      relate: (r: PartnerPatientRelationship, now: Date) => relate({ db, table: target.table }, r, { now }),
    };
    const result = await importChart(
      new ChartPatientWriter(new ChartStore(db, target.table), forms, () => new Date(), [mrnIndex]),
      validation.value,
      relationships,
    );
    if (!result.ok) throw new Error('validated document failed validation'); // unreachable: validated above
    const c = result.counts;
    io.out(
      `imported ${c.patients} patients, ${c.encounters} encounters, ${c.notes} notes, ${c.assessments} assessments (${c.items} items) into ${target.table} (${target.source}); ${c.patients} patients indexed for form matching and by MRN${c.relationships ? `; ${c.relationships} partner relationships` : ''}`,
    );
    // an (authority, MRN) another chart patient already holds: HL7 intake keeps filing under the first (ids only, no MRN)
    if (mrnIndex.conflicts.length > 0)
      io.err(
        `warning: ${mrnIndex.conflicts.length} patient(s) share an assigning authority + MRN with an earlier chart patient; HL7 messages for that MRN go to the earlier one: ${mrnIndex.conflicts.slice(0, 20).join(', ')}`,
      );
    return 0;
  } catch (error) {
    const name = (error as Error).name;
    if (target.source === 'local stack' && isConnectionRefused(error)) {
      io.err(LOCAL_STACK_NOT_RUNNING);
    } else if (error instanceof DependencyUnavailableError) {
      io.err(
        `DynamoDB at ${target.endpoint ?? 'the AWS default endpoint'} is unavailable or throttling; nothing or only part was written (re-running is safe).${target.source === 'local stack' ? ' Is `npm start` running?' : ''}`,
      );
    } else if (name === 'ResourceNotFoundException') {
      io.err(`table ${target.table} does not exist${target.source === 'local stack' ? ': run `npm start` first' : ''}`);
    } else if (error instanceof KeyServiceError) {
      io.err(
        `KMS is unavailable or refused the match index key (${error.name}); the chart may be written but not indexed: re-run the import (every write is an upsert) or \`npm run reindex\``,
      );
    } else {
      io.err(`import failed (${name}); re-running is safe, every write is an upsert`);
    }
    return 1;
  } finally {
    db.destroy();
    kms.destroy();
  }
}

/** The CLI with text output (lib/admin/cli-runner.ts CliIo), as the other operator CLIs. */
export function main(argv: string[], io: TextIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return runImportChart(argv, { env, out: (line) => io.out(line + '\n'), err: (line) => io.err(line + '\n') });
}

if (require.main === module) {
  quietAwsSdkNotice();
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
