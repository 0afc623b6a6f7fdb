/**
 * `npm run eval:matching [-- --seed N --size N --per-kind N --no-write]`: the matcher measured end
 * to end on a seeded synthetic population (population.ts).
 *
 *   1. starts the local stack (in memory, free loopback ports, the real background workers);
 *   2. writes the population as a chart import document and loads it with the REAL import CLI
 *      (`tsx scripts/import-chart.ts FILE`, a child process, against the stack);
 *   3. posts every packet to POST /receiveFormIntakeScope (HTTP, the emulated API Gateway, the
 *      real authorizer and handler) with an evaluation key of partner demo-forms;
 *   4. waits until the real matching worker has decided every packet;
 *   5. prints a confusion table (right route, wrong route, held for review, by kind) and, unless
 *      --no-write, writes docs/matching-eval.md.
 * A benchmark, not a test: npm test runs a small fixed-seed version (test/integration/matching-eval.test.ts).
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { dynamoDbClient } from '../../lib/aws/clients';
import { Scopes } from '../../lib/config/service';
import { FormsStore } from '../../lib/forms/packet-store';
import { packetIdFor } from '../../lib/forms/packet-id';
import { ApiKeyStore } from '../../lib/keys/api-key-store';
import { hashApiKey, keyIdFromHash } from '../../lib/keys/api-key';
import { startLocalStack, type LocalStack } from '../../lib/local/stack';
import { processIo, readSingleCommand, type CliIo } from '../../lib/admin/cli-runner';
import { UsageError, wholeNumber, type CommandSpec, type ParsedCommand } from '../../lib/admin/cli-options';
import { generatePopulation, PACKET_KINDS, type EvalPacket, type PacketKind } from './population';

const ROOT = path.resolve(__dirname, '..', '..');
const EVAL_KEY = 'matching-eval-key';
const SOURCE_SYSTEM = 'demo-forms';

export interface EvalOptions {
  seed: number;
  size: number;
  perKind: number;
  /** requests in flight */
  concurrency?: number;
  log?: (line: string) => void;
  /** an already running stack (tests); otherwise one is started and stopped */
  stack?: LocalStack;
}

export interface KindRow {
  kind: PacketKind;
  packets: number;
  identifiable: number;
  right: number;
  wrong: number;
  held: number;
  /** identifiable packets routed to their patient */
  identifiableRouted: number;
}

export interface EvalResult {
  seed: number;
  population: number;
  rows: KindRow[];
  total: KindRow;
  /** share of identifiable packets routed (right) */
  autoRouteRate: number;
  /** namesake, twin and not-in-chart packets routed anywhere */
  unsafeRoutes: number;
  importMs: number;
  matchMs: number;
  reasons: Record<string, number>;
}

const run = promisify(execFile);

async function importThroughCli(stack: LocalStack, file: string): Promise<string> {
  const tsx = path.join(ROOT, 'node_modules', '.bin', 'tsx');
  const { stdout } = await run(tsx, [path.join(ROOT, 'scripts', 'import-chart.ts'), file], {
    cwd: ROOT,
    env: { ...process.env, ...stack.env },
    maxBuffer: 1 << 20,
  });
  return stdout.trim();
}

async function createEvalKey(stack: LocalStack): Promise<void> {
  const keyHash = hashApiKey(EVAL_KEY);
  await new ApiKeyStore(dynamoDbClient(), stack.tables.keys).putKey({
    keyHash,
    keyId: keyIdFromHash(keyHash),
    partnerId: 'demo-forms',
    label: EVAL_KEY,
    scopes: [Scopes.ingestForms],
    status: 'active',
    rateLimit: 1_000_000,
    rateWindowSeconds: 60,
    createdAt: new Date().toISOString(),
  });
}

async function post(stack: LocalStack, p: EvalPacket): Promise<number> {
  const body = {
    payload: { sourceSystemId: SOURCE_SYSTEM, formId: 'eval-intake', submissionId: p.submissionId, patient: p.patient, answers: { q1: 'synthetic' } },
  };
  const res = await fetch(`${stack.urls.api}/receiveFormIntakeScope`, {
    method: 'POST',
    headers: { 'x-api-key': EVAL_KEY, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  await res.arrayBuffer();
  return res.status;
}

async function inBatches<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

function emptyRow(kind: PacketKind): KindRow {
  return { kind, packets: 0, identifiable: 0, right: 0, wrong: 0, held: 0, identifiableRouted: 0 };
}

export async function runMatchingEval(options: EvalOptions): Promise<EvalResult> {
  const log = options.log ?? (() => undefined);
  const stack = options.stack ?? (await startLocalStack({ ports: { api: 0, dynamodb: 0, sqs: 0, kms: 0 }, prefix: 'interop-eval', backgroundWorkers: true }));
  const dir = mkdtempSync(path.join(tmpdir(), 'matching-eval-'));
  try {
    const { patients, packets } = generatePopulation({ seed: options.seed, size: options.size }, options.perKind);
    const file = path.join(dir, 'population.json');
    writeFileSync(file, JSON.stringify({ patients }));
    let started = Date.now();
    log(await importThroughCli(stack, file));
    const importMs = Date.now() - started;
    await createEvalKey(stack);

    started = Date.now();
    await inBatches(packets, options.concurrency ?? 8, async (p) => {
      const status = await post(stack, p);
      if (status !== 202) throw new Error(`packet ${p.submissionId} answered ${status}`);
    });
    log(`posted ${packets.length} packets`);

    const store = new FormsStore(dynamoDbClient(), stack.tables.forms);
    const outcome = new Map<string, { state: string; patientId?: string; reason?: string }>();
    const deadline = Date.now() + 10 * 60_000;
    let waiting = packets;
    while (waiting.length > 0) {
      if (Date.now() > deadline) throw new Error(`${waiting.length} packets still pending_match after 10 minutes`);
      const still: EvalPacket[] = [];
      await inBatches(waiting, 16, async (p) => {
        const record = await store.getPacket(packetIdFor('demo-forms', SOURCE_SYSTEM, p.submissionId), { withContent: false });
        if (!record || record.state === 'pending_match') still.push(p);
        else outcome.set(p.submissionId, { state: record.state, patientId: record.patientId, reason: record.reason });
      });
      waiting = still;
      if (waiting.length > 0) await new Promise((r) => setTimeout(r, 250));
    }
    const matchMs = Date.now() - started;

    const rows = new Map<PacketKind, KindRow>(PACKET_KINDS.map((k) => [k, emptyRow(k)]));
    const total = emptyRow('exact');
    const reasons: Record<string, number> = {};
    let unsafeRoutes = 0;
    for (const p of packets) {
      const o = outcome.get(p.submissionId)!;
      const row = rows.get(p.kind)!;
      const routed = o.state === 'matched';
      const right = routed && o.patientId === p.truth;
      reasons[`${o.state}:${o.reason ?? '-'}`] = (reasons[`${o.state}:${o.reason ?? '-'}`] ?? 0) + 1;
      for (const r of [row, total]) {
        r.packets++;
        if (p.identifiable) r.identifiable++;
        if (right) r.right++;
        else if (routed) r.wrong++;
        else r.held++;
        if (right && p.identifiable) r.identifiableRouted++;
      }
      if (routed && (p.kind === 'namesake' || p.kind === 'twin' || p.kind === 'not_in_chart')) unsafeRoutes++;
    }
    return {
      seed: options.seed,
      population: patients.length,
      rows: [...rows.values()].filter((r) => r.packets > 0),
      total,
      autoRouteRate: total.identifiable ? total.identifiableRouted / total.identifiable : 0,
      unsafeRoutes,
      importMs,
      matchMs,
      reasons,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
    if (!options.stack) await stack.close();
  }
}

const pct = (n: number, d: number) => (d === 0 ? '-' : `${((100 * n) / d).toFixed(1)} %`);

export function confusionTable(result: EvalResult): string {
  const lines = [
    '| Kind | Packets | Identifiable | Right route | Wrong route | Held for review | Identifiable auto-routed |',
    '|---|---:|---:|---:|---:|---:|---:|',
  ];
  for (const r of [...result.rows, { ...result.total, kind: 'all' as PacketKind }]) {
    lines.push(`| ${r.kind} | ${r.packets} | ${r.identifiable} | ${r.right} | ${r.wrong} | ${r.held} | ${pct(r.identifiableRouted, r.identifiable)} |`);
  }
  return lines.join('\n');
}

function report(result: EvalResult, options: EvalOptions): string {
  return `# Matching evaluation (\`npm run eval:matching\`)

Generated by bench/matching/eval.ts; do not edit by hand. Population and packet kinds:
bench/matching/population.ts (seeded, synthetic). Loaded with the real import CLI into a local stack,
posted through POST /receiveFormIntakeScope, decided by the real matching worker. Rules and
weights: docs/forms.md.

Run: seed ${result.seed}, ${result.population} chart patients, up to ${options.perKind} packets per kind,
${result.total.packets} packets. Import ${(result.importMs / 1000).toFixed(1)} s; posting and matching ${(result.matchMs / 1000).toFixed(1)} s.

${confusionTable(result)}

- Wrong routes: **${result.total.wrong}**. Namesake, twin and not-in-chart packets auto-routed: **${result.unsafeRoutes}**.
- Identifiable packets auto-routed to their patient: **${pct(result.total.identifiableRouted, result.total.identifiable)}**
  (${result.total.identifiableRouted} of ${result.total.identifiable}). A packet is identifiable when its patient is in the
  chart and no other chart patient shares the last name and birth date, or the packet carries the
  patient's email (twins and namesakes are never routed on the name alone).
- Final states and reasons: ${Object.entries(result.reasons)
    .sort()
    .map(([k, v]) => `\`${k}\` ${v}`)
    .join(', ')}.
`;
}

export const EVAL_COMMAND: CommandSpec = {
  name: '',
  summary:
    'Measures the form matcher end to end on a seeded synthetic population (its own local stack, the import CLI, the endpoint, the worker); prints a confusion table and writes docs/matching-eval.md. Exit 1 when a packet was routed wrongly or unsafely or fewer than 95% of the identifiable ones were routed.',
  options: {
    seed: { type: 'string', value: 'N', description: 'population seed (default 20261123)' },
    size: { type: 'string', value: 'N', description: 'chart patients (default 2000)' },
    'per-kind': { type: 'string', value: 'N', description: 'packets per kind (default 150)' },
    'no-write': { type: 'boolean', description: 'print only; do not write docs/matching-eval.md' },
  },
  examples: ['npm run eval:matching', 'npm run eval:matching -- --seed 7 --size 500 --per-kind 20 --no-write'],
};

/**
 * The command line, read before anything starts: `--help` (exit 0) and wrong usage (one line +
 * "see --help", exit 2) as every operator CLI; else the options to run with.
 */
export function readEvalCommand(argv: string[], io: CliIo): { exitCode: number } | { values: ParsedCommand['values']; options: Omit<EvalOptions, 'log'> } {
  try {
    const read = readSingleCommand('eval:matching', EVAL_COMMAND, argv, io);
    if ('exitCode' in read) return read;
    if (read.positionals.length) throw new UsageError(`unexpected argument "${read.positionals[0]}"`);
    const { values } = read;
    const whole = (option: string, fallback: number) =>
      values[option] === undefined ? fallback : wholeNumber(option, values[option] as string, option === 'seed' ? 0 : 1);
    return { values, options: { seed: whole('seed', 20261123), size: whole('size', 2000), perKind: whole('per-kind', 150) } };
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    io.err(`${error.message} (see \`npm run eval:matching -- --help\`)\n`);
    return { exitCode: 2 };
  }
}

export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  const command = readEvalCommand(argv, io);
  if ('exitCode' in command) return command.exitCode;
  const { values } = command;
  const options: EvalOptions = { ...command.options, log: (l) => io.out(l + '\n') };
  const result = await runMatchingEval(options);
  io.out(
    `\n${confusionTable(result)}\n\nwrong routes ${result.total.wrong}, unsafe routes ${result.unsafeRoutes}, identifiable auto-routed ${pct(result.total.identifiableRouted, result.total.identifiable)}\n`,
  );
  if (!values['no-write']) {
    writeFileSync(path.join(ROOT, 'docs', 'matching-eval.md'), report(result, options));
    io.out('wrote docs/matching-eval.md\n');
  }
  return result.total.wrong === 0 && result.unsafeRoutes === 0 && result.autoRouteRate >= 0.95 ? 0 : 1;
}

if (require.main === module) {
  process.env.LOG_LEVEL ??= 'error';
  main(process.argv.slice(2)).then(
    (code) => process.exit(code),
    (error: Error) => {
      process.stderr.write(`eval failed: ${error.message}\n`);
      process.exit(1);
    },
  );
}
