/**
 * `npm run dlq -- <command>`: the dead-letter queues on the local stack or a deployed stage
 * (lib/admin/dlq-admin.ts does the work; this file is the command line). Prints counts and ages,
 * never a message body.
 */
import { Queues, type QueueId } from '../config/service';
import { readToolCommand, table, UsageError, wholeNumber, type CommandSpec } from './cli-options';
import { runCli, type CliIo } from './cli-runner';
import { DlqAdmin, queueIdOf, type DlqTarget } from './dlq-admin';

const stageOption = {
  type: 'string',
  value: 'NAME',
  description: 'act on a deployed stage (default: the local stack; also INTEROP_STAGE). Uses AWS_REGION and the usual AWS credentials',
} as const;
const jsonOption = { type: 'boolean', description: 'print JSON instead of text' } as const;
const QUEUE_NAMES = Object.keys(Queues).join(', ');

export const DlqCommands: CommandSpec[] = [
  {
    name: 'list',
    summary: 'each dead-letter queue: messages, messages in flight, age of the oldest message (no message content)',
    options: { stage: stageOption, json: jsonOption },
    examples: ['npm run dlq -- list', 'npm run dlq -- list --stage prod --json'],
  },
  {
    name: 'redrive',
    args: '<queue>',
    summary: `move the messages of <queue>'s dead-letter queue back to <queue> (${QUEUE_NAMES}); safe to run again`,
    options: {
      max: { type: 'string', value: 'N', description: 'move at most N messages (default: all)' },
      stage: stageOption,
      json: jsonOption,
    },
    examples: ['npm run dlq -- redrive matching', 'npm run dlq -- redrive webhookDeliveries --stage prod --max 100'],
  },
];

const DLQ_TOOL = {
  name: 'dlq',
  summary: 'Dead-letter queues on the local stack (default) or a deployed stage (--stage).',
  commands: DlqCommands,
  footer: [
    'Fix the cause first (the alarm, the function logs): a redriven message that fails again returns to the DLQ after maxReceiveCount tries.',
    'A message sent on but not deleted (an interrupted run) is sent again by the next run: consumers must be idempotent (they are).',
  ],
};

export interface DlqCliDependencies {
  resolveTarget: (stage: string | undefined) => DlqTarget;
  now?: () => Date;
}

function age(seconds: number | undefined): string {
  if (seconds === undefined) return '-';
  if (seconds < 120) return `${seconds}s`;
  if (seconds < 7200) return `${Math.floor(seconds / 60)}m`;
  if (seconds < 172_800) return `${Math.floor(seconds / 3600)}h`;
  return `${Math.floor(seconds / 86_400)}d`;
}

export function dlqCli(argv: string[], io: CliIo, deps: DlqCliDependencies): Promise<number> {
  return runCli('dlq', io, async (setTarget) => {
    const read = readToolCommand(DLQ_TOOL, argv, io);
    if ('exitCode' in read) return read.exitCode;
    const { command, values, positionals } = read;
    const json = values.json === true;
    const stage = values.stage as string | undefined;
    switch (command) {
      case 'list': {
        if (positionals.length) throw new UsageError(`list takes no positional arguments (got ${positionals.join(' ')})`);
        const target = deps.resolveTarget(stage);
        setTarget(target);
        const statuses = await new DlqAdmin(target, deps.now).list();
        if (json) io.out(JSON.stringify(statuses, null, 2) + '\n');
        else
          io.out(
            table(
              ['QUEUE', 'DEAD-LETTER QUEUE', 'MESSAGES', 'IN FLIGHT', 'OLDEST'],
              statuses.map((s) => [s.queue, s.dlqName, String(s.messages), String(s.inFlight), age(s.oldestAgeSeconds)]),
            ),
          );
        io.err(`${target.description}: ${statuses.reduce((n, s) => n + s.messages, 0)} dead-lettered message(s)\n`);
        return 0;
      }
      case 'redrive': {
        if (positionals.length !== 1) throw new UsageError(`redrive takes exactly one queue (${QUEUE_NAMES})`);
        const id: QueueId | undefined = queueIdOf(positionals[0]!);
        if (!id) throw new UsageError(`unknown queue "${positionals[0]}" (${QUEUE_NAMES})`);
        const max = values.max !== undefined ? wholeNumber('max', values.max as string, 1) : undefined;
        const target = deps.resolveTarget(stage);
        setTarget(target);
        const result = await new DlqAdmin(target, deps.now).redrive(id, { ...(max !== undefined ? { max } : {}) });
        if (json) io.out(JSON.stringify(result) + '\n');
        else io.out(`moved ${result.moved} message(s) from ${result.from} to ${result.to}\n`);
        if (result.sendFailed || result.notDeleted) {
          io.err(
            `${result.sendFailed} not sent (still in ${result.from}), ${result.notDeleted} sent but not deleted (will be sent again): run the command again\n`,
          );
          return 1;
        }
        return 0;
      }
    }
    throw new UsageError(`unknown command "${command}"`);
  });
}
