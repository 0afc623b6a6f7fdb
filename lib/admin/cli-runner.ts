/**
 * How the operator CLIs end: exit code and the one line a person reads. 0 done; 1 refused or
 * failed (one line, nothing half-written or a `resume` hint); 2 wrong usage (one line + "--help").
 */
import { AdminError, UnfinishedKeyError } from './key-admin';
import { UsageError } from './cli-options';
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
      io.err(
        `${why}\nkey ${error.keyId} is written but NOT active (refused by the service). Finish it with \`npm run keys -- resume ${error.keyId}${target?.stage ? ` --stage ${target.stage}` : ''}\`; ` +
          `its secret (shown once, works once resumed): ${error.secret}\nor discard it with \`npm run keys -- revoke ${error.keyId}\`.\n`,
      );
      return 1;
    }
    const explained = explainTargetFailure(error, target);
    io.err(`${explained ?? `${tool} failed: ${(error as Error).name}: ${(error as Error).message}`}\n`);
    return 1;
  }
}

/** What the admin CLIs (keys, partners) are given: where to act, and a clock for tests. */
export interface AdminCliDependencies {
  /** `--stage` (or undefined: the local stack) -> where to act; scripts pass lib/admin/target.ts resolveTarget */
  resolveTarget: (stage: string | undefined) => AdminTarget;
  now?: () => Date;
}
