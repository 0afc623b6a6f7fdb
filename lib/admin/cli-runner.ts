/**
 * How the operator CLIs end: exit code and the one line a person reads. 0 done; 1 refused or
 * failed (one line, nothing half-written or a `resume` hint); 2 wrong usage (one line + "--help").
 */
import { AdminError, UnfinishedKeyError } from './key-admin';
import { commandHelp, parseCommand, UsageError, type CommandSpec, type ParsedCommand } from './cli-options';
import { explainTargetFailure, type AdminTarget } from './target';

export interface CliIo {
  out(text: string): void;
  err(text: string): void;
}

export const processIo: CliIo = { out: (t) => process.stdout.write(t), err: (t) => process.stderr.write(t) };

/** what the runner needs of a target: its description and stage (keys, partners: AdminTarget; dlq: DlqTarget) */
export type CliTarget = Pick<AdminTarget, 'description' | 'stage'>;

export async function runCli(tool: string, io: CliIo, body: (setTarget: (t: CliTarget) => void) => Promise<number>): Promise<number> {
  let target: CliTarget | undefined;
  try {
    return await body((t) => (target = t));
  } catch (error) {
    if (error instanceof UsageError) {
      io.err(`${error.message} (see \`npm run ${tool} -- --help\`)\n`);
      return 2;
    }
    if (error instanceof AdminError) {
      io.err(`${error.message}\n`);
      return 1;
    }
    if (error instanceof UnfinishedKeyError) {
      const why = explainTargetFailure(error.cause, target) ?? (error.cause as Error).message;
      io.err(`${why}\n${error.advice(target?.stage)}\n`);
      return 1;
    }
    io.err(`${oneLineFailure(tool, error, target)}\n`);
    return 1;
  }
}

/** A failure as the one line a person reads: the target's explanation, else the error's name and first line. */
export function oneLineFailure(tool: string, error: unknown, target?: CliTarget): string {
  const explained = explainTargetFailure(error, target);
  return explained ?? `${tool} failed: ${(error as Error)?.name ?? 'Error'}: ${String((error as Error)?.message ?? error).split('\n')[0]}`;
}

/** A CLI without process globals: argv and output in, exit code out (scripts/*.ts run it through runMain). */
export type CliMain = (argv: string[], io: CliIo) => Promise<number>;

/**
 * A script's entry: quiets the AWS SDK's Node.js version notice before any client exists (the
 * runtime is checked by npm's engines), runs the CLI and exits with its code; anything it did not
 * catch is still one line and exit 1, never a stack trace.
 */
export function runMain(tool: string, main: CliMain, argv: string[] = process.argv.slice(2)): void {
  quietAwsSdkNotice();
  main(argv, processIo).then(
    (code) => process.exit(code),
    (error: unknown) => {
      process.stderr.write(`${oneLineFailure(tool, error)}\n`);
      process.exit(1);
    },
  );
}

export function quietAwsSdkNotice(env: NodeJS.ProcessEnv = process.env): void {
  env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
}

/**
 * A single-command tool's command line (`npm run audit -- [options]`): `--help` prints the
 * usage (exit 0); an unknown option is a UsageError (exit 2 through runCli).
 */
export function readSingleCommand(tool: string, spec: CommandSpec, argv: string[], io: CliIo): { exitCode: number } | ParsedCommand {
  const parsed = parseCommand(spec, argv);
  if (parsed.values.help) {
    io.out(commandHelp(tool, spec));
    return { exitCode: 0 };
  }
  return parsed;
}

/** What the admin CLIs (keys, partners) are given: where to act, and a clock for tests. */
export interface AdminCliDependencies {
  /** `--stage` (or undefined: the local stack) -> where to act; scripts pass lib/admin/target.ts resolveTarget */
  resolveTarget: (stage: string | undefined) => AdminTarget;
  now?: () => Date;
}
