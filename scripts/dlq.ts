/**
 * `npm run dlq -- <command>`: the dead-letter queues (list, redrive). `npm run dlq -- --help`
 * lists the commands. Implementation: lib/admin/dlq-cli.ts and lib/admin/dlq-admin.ts.
 */
import { processIo } from '../lib/admin/cli-runner';
import { resolveDlqTarget } from '../lib/admin/dlq-admin';
import { dlqCli } from '../lib/admin/dlq-cli';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';

dlqCli(process.argv.slice(2), processIo, { resolveTarget: (stage) => resolveDlqTarget(stage, useLocalStackEnvironment) }).then((code) => process.exit(code));
