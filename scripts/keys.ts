/**
 * `npm run keys -- <command>`: partner API keys. `npm run keys -- --help` lists the commands;
 * each command's `--help` lists every option with examples. Implementation: lib/admin/keys-cli.ts.
 */
import { runMain } from '../lib/admin/cli-runner';
import { resolveTarget } from '../lib/admin/target';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { keysCli } from '../lib/admin/keys-cli';

export const main: Parameters<typeof runMain>[1] = (argv, io) =>
  keysCli(argv, io, { resolveTarget: (stage) => resolveTarget(stage, useLocalStackEnvironment) });

if (require.main === module) runMain('keys', main);
