/**
 * `npm run build`: one minified, tree-shaken ESM bundle per Lambda (endpoints, authorizer,
 * background functions) with source maps, into dist/<name>/index.mjs — the same esbuild settings
 * the CDK app uses, so a tester can inspect or time exactly what deploys.
 */
import { build } from 'esbuild';
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { readFileSync } from 'node:fs';
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints } from '../lib/config/service';
import { ESM_REQUIRE_BANNER, LAMBDA_ESBUILD_TARGET, LAMBDA_MAIN_FIELDS } from '../lib/config/lambda-bundle';
import { UsageError, type CommandSpec } from '../lib/admin/cli-options';
import { readSingleCommand, runCli, runMain, type CliIo } from '../lib/admin/cli-runner';

const BUILD_COMMAND: CommandSpec = {
  name: '',
  summary:
    'One minified, tree-shaken ESM bundle per Lambda, with source maps, into dist/<name>/index.mjs (the settings the CDK app uses); prints each size and its gzip size.',
  options: {},
  examples: ['npm run build'],
};

/** The esbuild options of every Lambda bundle: those of the CDK app (lib/config/lambda-bundle.ts). */
export const LAMBDA_BUNDLE_OPTIONS = {
  bundle: true,
  minify: true,
  treeShaking: true,
  // index.mjs.map beside the bundle, linked by a comment; the bundle does not carry it
  sourcemap: 'linked' as const,
  sourcesContent: false,
  platform: 'node' as const,
  target: LAMBDA_ESBUILD_TARGET,
  format: 'esm' as const,
  mainFields: LAMBDA_MAIN_FIELDS,
  // CommonJS dependencies inside an ESM bundle need a require
  banner: { js: ESM_REQUIRE_BANNER },
  legalComments: 'none' as const,
  logLevel: 'warning' as const,
};

export function functionNames(): string[] {
  return [AuthorizerFunction.name, ...HttpEndpoints.map((e) => e.name), ...BackgroundFunctions.map((f) => f.name)];
}

async function buildAll(io: CliIo): Promise<void> {
  const root = path.resolve(__dirname, '..');
  const rows: string[] = [];
  for (const name of functionNames()) {
    const outfile = path.join(root, 'dist', name, 'index.mjs');
    mkdirSync(path.dirname(outfile), { recursive: true });
    await build({ ...LAMBDA_BUNDLE_OPTIONS, entryPoints: [path.join(root, 'functions', `${name}.ts`)], outfile });
    const size = statSync(outfile).size;
    const gz = gzipSync(readFileSync(outfile)).length;
    rows.push(`${name.padEnd(26)} ${(size / 1024).toFixed(1).padStart(8)} KB ${(gz / 1024).toFixed(1).padStart(8)} KB gzip`);
  }
  io.out(rows.join('\n') + '\n');
}

export function main(argv: string[], io: CliIo): Promise<number> {
  return runCli('build', io, async () => {
    const read = readSingleCommand('build', BUILD_COMMAND, argv, io);
    if ('exitCode' in read) return read.exitCode;
    if (read.positionals.length > 0) throw new UsageError(`unexpected argument "${read.positionals[0]}"`);
    await buildAll(io);
    return 0;
  });
}

if (require.main === module) runMain('build', main);
