/**
 * `npm run reindex [-- --restart] [--page-size N]`: rebuild the form-matching index from the chart
 * table (lib/forms/reindex.ts): paginated, idempotent, resumable, progress printed (counts only).
 * Target as `npm run import`: CHART_TABLE + FORMS_TABLE + RESULTS_TABLE + KMS_KEY_ID from the environment, else the
 * running local stack (.local/endpoints.json).
 */
import { MrnIndex } from '../lib/intake/mrn-index';
import { MrnPatientIndex } from '../lib/intake/receive-hl7-wiring';
import { loadResultKeys } from '../lib/results/lookup-keys';
import { parseArgs } from 'node:util';
import { ChartStore } from '../lib/chart/chart-store';
import { explicitFormsDependencies } from '../lib/forms/forms-wiring';
import { reindexMatchIndex } from '../lib/forms/reindex';
import { clientFor, kmsClientFor, MissingTargetError, resolveTarget, type CliIo } from './import-chart';
import { isConnectionRefused, LOCAL_STACK_NOT_RUNNING } from '../lib/admin/target';
import { quietAwsSdkNotice, type CliIo as TextIo } from '../lib/admin/cli-runner';

const USAGE = 'usage: npm run reindex -- [--restart] [--page-size N]';
/** a usage error: one line, and where help is (as every operator CLI) */
const usageError = (message: string) => `${message} (see \`npm run reindex -- --help\`)`;

export async function runReindex(argv: string[], io: CliIo & { maxPages?: number }): Promise<number> {
  let values: { restart?: boolean; 'page-size'?: string; help?: boolean };
  try {
    values = parseArgs({
      args: argv,
      options: { restart: { type: 'boolean' }, 'page-size': { type: 'string' }, help: { type: 'boolean', short: 'h' } },
    }).values;
  } catch (error) {
    io.err(usageError((error as Error).message.split('\n')[0]!));
    return 2;
  }
  if (values.help) {
    io.out(USAGE);
    return 0;
  }
  const pageSize = values['page-size'] === undefined ? 200 : Number(values['page-size']);
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > 1000) {
    io.err(usageError(`--page-size must be an integer 1-1000, got ${values['page-size']}`));
    return 2;
  }
  let target;
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
    const deps = explicitFormsDependencies({ db, kms, kmsKeyId: target.kmsKeyId, formsTable: target.formsTable, chartTable: target.table });
    const mrnIndex = new MrnPatientIndex(
      async () => (await loadResultKeys({ db, table: target.resultsTable, kms, kmsKeyId: target.kmsKeyId }, { create: true }))!,
      new MrnIndex(db, target.table),
    );
    const result = await reindexMatchIndex({
      chart: new ChartStore(db, target.table),
      deps,
      indexes: [mrnIndex],
      pageSize,
      restart: values.restart ?? false,
      maxPages: io.maxPages,
      onProgress: io.out,
    });
    return result.complete ? 0 : 1;
  } catch (error) {
    if (target.source === 'local stack' && isConnectionRefused(error)) io.err(LOCAL_STACK_NOT_RUNNING);
    else io.err(`reindex stopped (${(error as Error).name}); run it again to resume from the last completed page`);
    return 1;
  } finally {
    db.destroy();
    kms.destroy();
  }
}

/** The CLI with text output (lib/admin/cli-runner.ts CliIo), as the other operator CLIs. */
export function main(argv: string[], io: TextIo, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  return runReindex(argv, { env, out: (line) => io.out(line + '\n'), err: (line) => io.err(line + '\n') });
}

if (require.main === module) {
  quietAwsSdkNotice();
  runReindex(process.argv.slice(2), { env: process.env, out: (l) => process.stdout.write(l + '\n'), err: (l) => process.stderr.write(l + '\n') }).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      process.stderr.write(`reindex failed (${(error as Error)?.name ?? 'error'})\n`);
      process.exitCode = 1;
    },
  );
}
