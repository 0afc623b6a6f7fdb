/**
 * Test support for the least-privilege check (infra/least-privilege.test.ts): bundles a function
 * exactly as infra/service-function.ts has NodejsFunction bundle it, and reads which AWS operations
 * the bundle can send. Not used by the app itself.
 *
 * The marker: every AWS SDK v3 client builds its commands with
 * `command = makeBuilder(params, "<service namespace>", "<Client>", ...)` and
 * `class XCommand extends command(endpointParams, middleware, "<Operation>", schema) {}`. Minifying
 * renames `command` and the class, never the string literals, so in the minified bundle
 * `B=f(p,"DynamoDB_20120810","DynamoDBClient"` names the builder `B` of the DynamoDB client and
 * `class extends B(e,m,"GetItem",s)` is one DynamoDB command the bundle contains.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { build } from 'esbuild';
import { ESM_REQUIRE_BANNER, REPO_ROOT, RUNTIME } from './service-function';

export const SdkServices = {
  dynamodb: { namespace: 'DynamoDB_20120810', client: 'DynamoDBClient' },
  kms: { namespace: 'TrentService', client: 'KMSClient' },
  sqs: { namespace: 'AmazonSQS', client: 'SQSClient' },
  s3: { namespace: 'AmazonS3', client: 'S3Client' },
} as const;
export type SdkService = keyof typeof SdkServices;

export interface FunctionBundle {
  /** the minified bundle (index.mjs) */
  code: string;
  /** first-party source files with code in the bundle (repository-relative), from esbuild's metafile */
  sources: string[];
}

/** esbuild with the options of infra/service-function.ts (NodejsFunction `bundling`), in memory. */
export async function bundleFunction(entry: string): Promise<FunctionBundle> {
  const result = await build({
    entryPoints: [entry],
    bundle: true,
    platform: 'node',
    target: `node${RUNTIME.name.replace(/^nodejs|\.x$/g, '')}`,
    format: 'esm',
    mainFields: ['module', 'main'],
    banner: { js: ESM_REQUIRE_BANNER },
    minify: true,
    sourcemap: false,
    write: false,
    metafile: true,
    logLevel: 'silent',
    absWorkingDir: REPO_ROOT,
    outfile: path.join(REPO_ROOT, 'cdk.out', 'least-privilege', 'index.mjs'),
  });
  const output = result.outputFiles.find((f) => f.path.endsWith('.mjs'))!;
  const meta = Object.values(result.metafile.outputs).find((o) => o.entryPoint)!;
  const sources = Object.entries(meta.inputs)
    .filter(([input, v]) => v.bytesInOutput > 0 && !input.includes('node_modules/'))
    .map(([input]) => input);
  return { code: output.text, sources };
}

const escape = (s: string) => s.replace(/[$]/g, '\\$');

/** The operations of `service` whose command classes the minified bundle contains. */
export function bundledOperations(code: string, service: SdkService): string[] {
  const { namespace, client } = SdkServices[service];
  const builders = [...code.matchAll(new RegExp(`([\\w$]+)=[\\w$]+\\([\\w$]+,"${namespace}","${client}"`, 'g'))].map((m) => m[1]!);
  const ops = new Set<string>();
  for (const builder of builders)
    for (const m of code.matchAll(new RegExp(`class extends ${escape(builder)}\\([\\w$]+,[\\w$]+,"(\\w+)",[\\w$]+\\)`, 'g'))) ops.add(m[1]!);
  return [...ops].sort();
}

/**
 * DynamoDB operations a first-party source file sends: `new <Op>Command(` and, for a Query made
 * through lib/aws/query-pages.ts, `queryPages(`. With `index`, the index names the file queries
 * (read from the `Tables` lookups the file makes); non-empty when the file queries an index.
 */
let indexConstants: Map<string, string> | undefined;
/** `export const <X>_INDEX = '<index>'` of every lib/ module: the index names the stores query by constant */
function indexNameConstants(): Map<string, string> {
  if (indexConstants) return indexConstants;
  const found = new Map<string, string>();
  const walk = (dir: string): void => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(full);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts')) {
        for (const m of fs.readFileSync(full, 'utf8').matchAll(/export const ([A-Z][A-Z0-9_]*_INDEX) = '([\w-]+)'/g)) found.set(m[1]!, m[2]!);
      }
    }
  };
  walk(path.join(REPO_ROOT, 'lib'));
  indexConstants = found;
  return found;
}

export function sourceDynamoOperations(file: string): { operations: string[]; indexes: string[] } {
  const text = fs.readFileSync(path.join(REPO_ROOT, file), 'utf8');
  const operations = new Set<string>();
  for (const m of text.matchAll(
    /new (GetItem|BatchGetItem|Query|Scan|PutItem|UpdateItem|DeleteItem|BatchWriteItem|TransactWriteItems|TransactGetItems)Command\(/g,
  ))
    operations.add(m[1]!);
  if (/\bawait queryPages\(/.test(text)) operations.add('Query');
  // IndexName: NAME, NAME found by `i.name === '<index>'` or `indexes[<n>]` of the table definitions,
  // or IndexName: <X>_INDEX, a named constant of lib/ (`export const <X>_INDEX = '<index>'`)
  const indexes = new Set<string>();
  if (/IndexName:/.test(text)) {
    for (const m of text.matchAll(/i\.name === '([\w-]+)'/g)) indexes.add(m[1]!);
    if (/Tables\.\w+\.indexes\[\d\]/.test(text)) indexes.add('(first index)');
    for (const m of text.matchAll(/IndexName: ([A-Z][A-Z0-9_]*_INDEX)\b/g)) {
      const name = indexNameConstants().get(m[1]!);
      if (name) indexes.add(name);
    }
  }
  return { operations: [...operations].sort(), indexes: [...indexes].sort() };
}
