/**
 * `npm run dlq -- <command>`: the dead-letter queues (list, redrive). `npm run dlq -- --help`
 * lists the commands. Implementation: lib/admin/dlq-cli.ts and lib/admin/dlq-admin.ts.
 */
import { runMain, type CliIo } from '../lib/admin/cli-runner';
import { resolveDlqTarget } from '../lib/admin/dlq-admin';
import { dlqCli } from '../lib/admin/dlq-cli';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';

export function main(argv: string[], io: CliIo): Promise<number> {
  return dlqCli(argv, io, { resolveTarget: (stage) => resolveDlqTarget(stage, useLocalStackEnvironment) });
}

if (require.main === module) runMain('dlq', main);
