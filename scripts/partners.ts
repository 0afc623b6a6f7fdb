/**
 * `npm run partners -- <command>`: partner records. `npm run partners -- --help` lists the
 * commands; each command's `--help` lists every option with examples. Implementation:
 * lib/admin/partners-cli.ts.
 */
import { processIo } from '../lib/admin/cli-runner';
import { partnersCli } from '../lib/admin/partners-cli';

partnersCli(process.argv.slice(2), processIo).then((code) => process.exit(code));
