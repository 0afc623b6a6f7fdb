/**
 * Option parsing shared by the operator CLIs: strict (an unknown option is one line, exit 2),
 * every number validated before anything is read or written, `--help` generated from the same
 * table that parses.
 */
import { parseArgs } from 'node:util';

/** Wrong usage: printed as one line (plus "see --help"), exit 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface OptionSpec {
  type: 'string' | 'boolean';
  /** e.g. `ID` in `--partner ID` */
  value?: string;
  description: string;
  multiple?: boolean;
}

export interface CommandSpec {
  /** the command (`create`); '' for a tool that is one command (`npm run audit -- [options]`) */
  name: string;
  /** e.g. `<keyId>` */
  args?: string;
  summary: string;
  options: Record<string, OptionSpec>;
  examples: string[];
}

export interface ParsedCommand {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

export function parseCommand(spec: CommandSpec, argv: string[]): ParsedCommand {
  const options = Object.fromEntries(Object.entries(spec.options).map(([name, o]) => [name, { type: o.type, ...(o.multiple ? { multiple: true } : {}) }]));
  try {
    const { values, positionals } = parseArgs({
      args: argv,
      allowPositionals: true,
      strict: true,
      options: { ...options, help: { type: 'boolean', short: 'h' } },
    });
    return { values: values as ParsedCommand['values'], positionals };
  } catch (error) {
    const message = (error as Error).message.split('\n')[0]!.replace(/\. To specify a positional argument.*$/, '');
    throw new UsageError(spec.name ? `${spec.name}: ${message}` : message);
  }
}

export function commandHelp(tool: string, spec: CommandSpec): string {
  const rows = Object.entries(spec.options).map(([name, o]) => [
    `--${name}${o.value ? ` ${o.value}` : ''}`,
    `${o.description}${o.multiple ? ' (repeatable)' : ''}`,
  ]);
  const width = Math.max(12, ...rows.map((r) => r[0]!.length));
  const lines = [
    `usage: npm run ${tool}${[' --', spec.name, spec.args, Object.keys(spec.options).length ? '[options]' : ''].filter(Boolean).join(' ')}`,
    '',
    `  ${spec.summary}`,
    '',
  ];
  lines.push('Options:');
  for (const row of rows) lines.push(`  ${row[0]!.padEnd(width)}  ${row[1]}`);
  lines.push(`  ${'--help'.padEnd(width)}  this text`, '');
  lines.push('Examples:', ...spec.examples.map((e) => `  ${e}`), '');
  return lines.join('\n');
}

export function toolHelp(tool: string, summary: string, commands: CommandSpec[], footer: string[] = []): string {
  const width = Math.max(...commands.map((c) => `${c.name}${c.args ? ` ${c.args}` : ''}`.length));
  return [
    `usage: npm run ${tool} -- <command> [options]`,
    '',
    `  ${summary}`,
    '',
    'Commands:',
    ...commands.map((c) => `  ${`${c.name}${c.args ? ` ${c.args}` : ''}`.padEnd(width)}  ${c.summary}`),
    '',
    `Every command takes --help (all options, with examples).`,
    ...footer,
    '',
  ].join('\n');
}

/** A whole number >= min (default 1); "abc", "1.5", "0", "1e3", " 5" are refused. */
/** A tool's command line, read: help was printed (with its exit code), or a command to run. */
export type ToolCommand = { exitCode: number } | ({ command: string } & ParsedCommand);

/**
 * Reads `<tool> <command> [options]`: no command or --help prints the tool's help (exit 2 without
 * a command, 0 when asked), `<command> --help` the command's; an unknown command is a UsageError.
 */
export function readToolCommand(
  tool: { name: string; summary: string; commands: CommandSpec[]; footer?: string[] },
  argv: string[],
  io: { out(text: string): void },
): ToolCommand {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    io.out(toolHelp(tool.name, tool.summary, tool.commands, tool.footer));
    return { exitCode: command ? 0 : 2 };
  }
  const spec = tool.commands.find((c) => c.name === command);
  if (!spec) throw new UsageError(`unknown command "${command}" (${tool.commands.map((c) => c.name).join(', ')})`);
  const parsed = parseCommand(spec, rest);
  if (parsed.values.help) {
    io.out(commandHelp(tool.name, spec));
    return { exitCode: 0 };
  }
  return { command, ...parsed };
}

export function wholeNumber(option: string, raw: string, min = 1, max = Number.MAX_SAFE_INTEGER): number {
  if (!/^\d+$/.test(raw)) throw new UsageError(`--${option} must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max) throw new UsageError(`--${option} must be between ${min} and ${max}, got ${raw}`);
  return value;
}

export const MAX_RATE_LIMIT = 1_000_000;
export const MAX_RATE_WINDOW_SECONDS = 86_400;

/** `--rate-limit N/Ss` (e.g. `100/60s`), or `N` with the window from `--window S` (default 60 s). */
export function rateLimitOption(raw: string, windowRaw?: string): { rateLimit: number; rateWindowSeconds: number } {
  const match = /^([^/]+)\/(\d+)s?$/.exec(raw);
  if (match && windowRaw !== undefined) throw new UsageError('give the window either in --rate-limit N/Ss or with --window, not both');
  const rateLimit = wholeNumber('rate-limit', match ? match[1]! : raw, 1, MAX_RATE_LIMIT);
  const windowText = match ? match[2]! : windowRaw;
  const rateWindowSeconds = windowText === undefined ? 60 : wholeNumber('window', windowText, 1, MAX_RATE_WINDOW_SECONDS);
  return { rateLimit, rateWindowSeconds };
}

const DURATION_UNITS: Record<string, number> = { s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
export const MAX_OVERLAP_MS = 30 * DURATION_UNITS.d!;

/** `--overlap 24h` / `30m` / `90s` / `7d` / `0` -> milliseconds (at most 30 days). */
export function durationOption(option: string, raw: string): number {
  const match = /^(\d+)([smhd])?$/.exec(raw);
  if (!match || (match[1] !== '0' && !match[2])) throw new UsageError(`--${option} must be a duration like 24h, 30m, 90s, 7d or 0, got "${raw}"`);
  const ms = Number(match[1]) * DURATION_UNITS[match[2] ?? 's']!;
  if (ms > MAX_OVERLAP_MS) throw new UsageError(`--${option} must be at most 30d, got ${raw}`);
  return ms;
}

/** `a,b , c` -> ['a','b','c'] (repeated options are joined). */
export function listOption(raw: string | string[] | boolean | undefined): string[] {
  if (raw === undefined || typeof raw === 'boolean') return [];
  return (Array.isArray(raw) ? raw : [raw])
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter(Boolean);
}

/** Rows as an aligned table with a header row. */
export function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n') + '\n';
}
