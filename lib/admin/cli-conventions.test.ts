/**
 * Every operator CLI (package.json scripts) keeps the same conventions: `--help` exits 0 and
 * prints usage; an unknown option exits 2; a CLI that talks to the stack, run while the local
 * stack is not running, exits 1 with the one shared line (no stack trace, no ECONNREFUSED).
 * In process: each script's exported `main`.
 */
import { execFile } from 'node:child_process';
import { copyFileSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { CliIo } from './cli-runner';
import { LOCAL_STACK_NOT_RUNNING } from './target';
import { Queues, Tables } from '../config/service';
import { auditLine, main as audit } from '../../scripts/audit';
import { main as build } from '../../scripts/build';
import { main as dlq } from '../../scripts/dlq';
import { main as inboxPage } from '../../scripts/build-inbox-page';
import { main as schemas } from '../../scripts/compile-schemas';
import { main as importChart } from '../../scripts/import-chart';
import { main as invoke } from '../../scripts/invoke';
import { main as keys } from '../../scripts/keys';
import { main as openapi } from '../../scripts/openapi';
import { main as partners } from '../../scripts/partners';
import { main as reindex } from '../../scripts/reindex';
import { main as webhookSink } from '../../scripts/webhook-sink';
import { main as webhooks } from '../../scripts/webhooks';
import { main as evalMatching } from '../../bench/matching/eval';
import { readBenchCommand } from '../../bench/run-command';

type Main = (argv: string[], io: CliIo) => Promise<number>;

/** bench/run.ts reads its command line through this before anything starts; here it must never get as far as a run */
const bench: Main = async (argv, io) => {
  const read = readBenchCommand(argv, io);
  if (!('exitCode' in read)) throw new Error(`the benchmark would start for ${JSON.stringify(argv)}`);
  return read.exitCode;
};

const dir = mkdtempSync(path.join(tmpdir(), 'cli-conventions-'));
const missingEndpoints = path.join(dir, 'missing-endpoints.json');
const chartFile = path.join(dir, 'chart.json');
copyFileSync(path.join(__dirname, '..', 'local', 'demo-chart.json'), chartFile);
const eventFile = path.join(dir, 'event.json');
writeFileSync(eventFile, '{}');

/** name, main, a command that needs the stack (undefined: the CLI never talks to it) */
const CLIS: Array<[string, Main, string[] | undefined]> = [
  ['import', importChart, [chartFile]],
  ['keys', keys, ['list']],
  ['invoke', invoke, ['exportHl7Note', eventFile]],
  ['audit', audit, ['--patient', 'p1']],
  ['partners', partners, ['list']],
  ['reindex', reindex, []],
  ['webhooks', webhooks, ['list']],
  ['dlq', dlq, ['list']],
  ['webhook-sink', webhookSink, undefined],
  ['build', build, undefined],
  ['openapi', openapi, undefined],
  ['inbox-page', inboxPage, undefined],
  ['schemas', schemas, undefined],
  // these two start their own stacks and run for minutes: only their command line is run here
  ['eval:matching', evalMatching, undefined],
  ['bench', bench, undefined],
];

async function run(main: Main, argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await main(argv, { out: (t) => (out += t), err: (t) => (err += t) });
  return { code, out, err };
}

/** Variables that would point a CLI at a stage or a running stack: removed for the test. */
const TARGET_VARIABLES = /^(INTEROP_STAGE|STAGE|CHART_TABLE|AWS_ENDPOINT_URL.*|.*_TABLE|.*_QUEUE_URL|KMS_KEY_ID|WEBHOOK_SECRET)$/;
const saved = { ...process.env };
beforeEach(() => {
  for (const name of Object.keys(process.env)) if (TARGET_VARIABLES.test(name)) delete process.env[name];
  process.env.INTEROP_ENDPOINTS_FILE = missingEndpoints;
});
afterAll(() => {
  process.env = saved;
});

describe.each(CLIS)('npm run %s', (tool, main, stackCommand) => {
  it('--help: exit 0, usage on stdout', async () => {
    const r = await run(main, ['--help']);
    expect(r).toMatchObject({ code: 0, err: '' });
    expect(r.out).toMatch(new RegExp(`^usage: npm run ${tool}\\b`));
  });

  it('an unknown option: exit 2, the problem and where help is', async () => {
    const r = await run(main, ['--no-such-option']);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/no-such-option/);
    expect(r.err).not.toMatch(/\n\s+at /);
    // one line, the same shape for every CLI
    expect(r.err).toMatch(new RegExp(`^[^\\n]+ \\(see \`npm run ${tool} -- --help\`\\)\\n$`));
  });

  if (stackCommand) {
    it('the local stack not running: exit 1, the one shared line', async () => {
      const r = await run(main, stackCommand);
      expect(r).toMatchObject({ code: 1, out: '', err: `${LOCAL_STACK_NOT_RUNNING}\n` });
    });
  }
});

describe('npm run bench and eval:matching: wrong usage stops before anything starts', () => {
  it.each([
    ['bench', bench, ['--quick', 'extra']],
    ['eval:matching', evalMatching, ['--size', '0']],
    ['eval:matching', evalMatching, ['--seed', 'abc']],
    ['eval:matching', evalMatching, ['extra']],
  ] as Array<[string, Main, string[]]>)('%s (case %#): exit 2, one line', async (tool, main, argv) => {
    const r = await run(main, argv);
    expect(r.code).toBe(2);
    expect(r.out).toBe('');
    expect(r.err).toMatch(new RegExp(`^[^\\n]+ \\(see \`npm run ${tool} -- --help\`\\)\\n$`));
  });

  it('bench/run.ts --help in a child process: usage, exit 0, no benchmark started', async () => {
    const tsx = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'tsx');
    const { stdout, stderr } = await promisify(execFile)(tsx, ['bench/run.ts', '--help'], { cwd: path.join(__dirname, '..', '..') });
    expect(stdout).toMatch(/^usage: npm run bench\b/);
    expect(stdout).not.toMatch(/\[bench\]/);
    expect(stderr).toBe('');
  });

  it('bench/run.ts with an unknown option in a child process: exit 2, no benchmark started', async () => {
    const tsx = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'tsx');
    const failure = await promisify(execFile)(tsx, ['bench/run.ts', '--no-such-option'], { cwd: path.join(__dirname, '..', '..') }).then(
      () => undefined,
      (error: { code: number; stdout: string; stderr: string }) => error,
    );
    expect(failure).toMatchObject({ code: 2, stdout: '' });
    expect(failure!.stderr).toMatch(/^[^\n]*no-such-option[^\n]* \(see `npm run bench -- --help`\)\n$/);
  });
});

describe('an endpoints file whose stack is down (nothing listens on its ports)', () => {
  it.each([
    ['keys', keys, ['list']],
    ['audit', audit, ['--patient', 'p1']],
    ['webhooks', webhooks, ['list']],
    ['import', importChart, [chartFile]],
    ['dlq', dlq, ['list']],
    ['reindex', reindex, []],
    ['partners', partners, ['list']],
  ] as Array<[string, Main, string[]]>)('%s: exit 1, the one shared line', async (_tool, main, argv) => {
    const closed = 'http://127.0.0.1:1';
    const endpoints = path.join(dir, 'endpoints.json');
    writeFileSync(
      endpoints,
      JSON.stringify({
        dynamodb: closed,
        kms: closed,
        kmsKeyId: 'local-key',
        region: 'us-east-1',
        tables: { chart: 'chart', forms: 'forms', results: 'results' },
        env: {
          AWS_REGION: 'us-east-1',
          AWS_ACCESS_KEY_ID: 'local',
          AWS_SECRET_ACCESS_KEY: 'local',
          AWS_ENDPOINT_URL_DYNAMODB: closed,
          AWS_ENDPOINT_URL_KMS: closed,
          AWS_ENDPOINT_URL_SQS: closed,
          ...Object.fromEntries(Object.values(Tables).map((t) => [t.env, `interop-local-${t.baseName}`])),
          ...Object.fromEntries(Object.values(Queues).map((q) => [q.env, `${closed}/000000000000/${q.baseName}`])),
        },
      }),
    );
    process.env.INTEROP_ENDPOINTS_FILE = endpoints;
    const r = await run(main, argv);
    expect(r).toMatchObject({ code: 1, err: `${LOCAL_STACK_NOT_RUNNING}\n` });
  });
});

describe('npm run audit text output', () => {
  const base = { at: '2026-11-26T03:00:00.000Z', action: 'inbox.route', requestId: 'req-1', outcome: 'success', status: 200 } as const;
  it('names the staff member who acted, and only the key when a key acted', () => {
    const staff = auditLine({ ...base, partnerId: 'clinic-staff', keyId: 'staff_ab12', staffSubject: 'staff-0001', staffUsername: 'demo-reviewer' });
    expect(staff).toMatch(/ partner=clinic-staff key=staff_ab12 staff=demo-reviewer request=req-1/);
    const key = auditLine({ ...base, partnerId: 'demo-ehr', keyId: 'key_1' });
    expect(key).toMatch(/ partner=demo-ehr key=key_1 request=req-1/);
    expect(key).not.toMatch(/staff=/);
  });
});

describe('npm run webhook-sink --respond', () => {
  it('walks the sequence per delivery (webhook-id), not across deliveries', async () => {
    const { Webhook } = await import('standardwebhooks');
    const secret = 'whsec_' + Buffer.alloc(32, 3).toString('base64');
    const statuses: number[] = [];
    const code = await main(webhookSink, ['--port', '0', '--secret', secret, '--respond', '500,200'], async (url) => {
      const post = async (id: string) => {
        const body = JSON.stringify({ type: 'ping', timestamp: new Date().toISOString(), data: {} });
        const headers = { 'webhook-id': id, 'webhook-timestamp': String(Math.floor(Date.now() / 1000)), 'content-type': 'application/json' };
        const signature = new Webhook(secret).sign(id, new Date(), body);
        statuses.push((await fetch(url, { method: 'POST', body, headers: { ...headers, 'webhook-signature': signature } })).status);
      };
      await post('dl_a');
      await post('dl_b');
      await post('dl_a');
      await post('dl_b');
    });
    expect(code).toBe(0);
    expect(statuses).toEqual([500, 500, 200, 200]);
  });
});

/** Runs the sink until `use` is done with its URL. */
async function main(sink: typeof webhookSink, argv: string[], use: (url: string) => Promise<void>): Promise<number> {
  return sink(argv, { out: () => undefined, err: () => undefined }, { onListening: (s, stop) => void use(s.url).finally(stop) });
}
