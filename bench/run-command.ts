/**
 * `npm run bench` command line (bench/run.ts), read before anything starts: `--help` prints the
 * usage (exit 0), an unknown option or an argument is one line + "see --help" (exit 2), as every
 * operator CLI (lib/admin/cli-runner.ts). Only then does the benchmark start.
 */
import { readSingleCommand, type CliIo } from '../lib/admin/cli-runner';
import { UsageError, type CommandSpec } from '../lib/admin/cli-options';

export const BENCH_COMMAND: CommandSpec = {
  name: '',
  summary:
    'Runs every benchmark on this machine (about 8 min on a quiet machine; it starts its own local stacks) and writes bench/results.json and bench/RESULTS.md. Not a test: nothing asserts a timing.',
  options: { quick: { type: 'boolean', description: 'small counts, to check the plumbing in a few minutes (results are not representative)' } },
  examples: ['npm run bench', 'npm run bench -- --quick'],
};

/** `{ exitCode }`: stop now with that code (help printed, or a usage error printed); else the options to run with. */
export function readBenchCommand(argv: string[], io: CliIo): { exitCode: number } | { quick: boolean } {
  try {
    const read = readSingleCommand('bench', BENCH_COMMAND, argv, io);
    if ('exitCode' in read) return read;
    if (read.positionals.length) throw new UsageError(`unexpected argument "${read.positionals[0]}"`);
    return { quick: read.values.quick === true };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`${error.message} (see \`npm run bench -- --help\`)\n`);
    return { exitCode: 2 };
  }
}
