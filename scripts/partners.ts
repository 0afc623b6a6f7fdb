/**
 * `npm run partners -- <command>`: partner records. `npm run partners -- --help` lists the
 * commands; each command's `--help` lists every option with examples. Implementation:
 * lib/admin/partners-cli.ts.
 */
import { processIo } from '../lib/admin/cli-runner';
import { resolveTarget } from '../lib/admin/target';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { partnersCli } from '../lib/admin/partners-cli';

partnersCli(process.argv.slice(2), processIo, { resolveTarget: (stage) => resolveTarget(stage, useLocalStackEnvironment) }).then((code) => process.exit(code));
