/**
 * `npm run keys -- <command>`: partner API keys. `npm run keys -- --help` lists the commands;
 * each command's `--help` lists every option with examples. Implementation: lib/admin/keys-cli.ts.
 */
import { processIo } from '../lib/admin/cli-runner';
import { resolveTarget } from '../lib/admin/target';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { keysCli } from '../lib/admin/keys-cli';

keysCli(process.argv.slice(2), processIo, { resolveTarget: (stage) => resolveTarget(stage, useLocalStackEnvironment) }).then((code) => process.exit(code));
