/**
 * `npm run partners -- <command>`: partner records. `npm run partners -- --help` lists the
 * commands; each command's `--help` lists every option with examples. Implementation:
 * lib/admin/partners-cli.ts.
 */
import { runMain } from '../lib/admin/cli-runner';
import { resolveTarget } from '../lib/admin/target';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { partnersCli } from '../lib/admin/partners-cli';

export const main: Parameters<typeof runMain>[1] = (argv, io) =>
  partnersCli(argv, io, { resolveTarget: (stage) => resolveTarget(stage, useLocalStackEnvironment) });

if (require.main === module) runMain('partners', main);
