/**
 * Hot partitions (issue 31, item 3): every DynamoDB write the local stack makes during a load run
 * in the mix 1,000 lab results : 500 form packets : 1,000 audited failures (2 : 1 : 2), counted by
 * the partition key it lands on: the table's own key and, for a table with a global secondary
 * index, the index key it writes or leaves (an update that moves an item from one index partition
 * to another writes both). A middleware on the shared DynamoDB client only looks (no request is
 * changed). Shares do not depend on the rate (shards are chosen by a hash or at random), so the run
 * is the mix at whatever rate this machine manages.
 *
 * Reported: the largest share of all writes taken by one partition key, and by one key within its
 * own table, split into service-wide keys (the ones a load concentrates: states, days, queues,
 * counters) and keys of one patient or one result, whose share in this run only reflects that the
 * demo chart has 5 patients (at scale each patient's keys take that patient's own traffic).
 *
 * Containers: the local stack is ONE authorizer container, and a container counts a key's
 * admissions in one rate-limit counter shard for a visit of at most 16 admissions within a slot,
 * then moves to the less written of two shards picked at random (lib/keys/rate-limiter.ts; a slot is
 * 1 s for a 60 s window). In Lambda a container serves one request at a time, so a key at 1,000 requests/s is
 * served by many containers at once, each counting in a shard of its own choosing. The counter
 * writes in the shares are therefore those of a container model, not of the local authorizer: one
 * SlidingWindowRateLimiter (the authorizer's only per-container state that decides where a counter
 * write lands: lib/keys/access-wiring.ts keeps one per container) per concurrency slot of the load,
 * each counting every request its slot sends against the key's limit, with the clock of the issue's
 * rates (request j of the plan at j / 2,500 s: 1,000 lab results + 500 form packets + 1,000
 * failures a second), against the same table under a subject of its own (`containers:key#...`). The
 * local authorizer's own counter writes (one container, the machine's rate) are counted apart and
 * reported, not in the shares. The same model checks the per-key limit: a key limited to 1,000 a
 * second, offered 1,250 in one second by the same number of containers, never admits more than
 * 1,000 in any 1,000 ms interval (counted over the admitted requests' clocks).
 *
 * Run alone: `npx tsx bench/partitions.ts [--quick]` (writes bench/partitions.json); `npm run bench`
 * runs it as well.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { DynamoDBClient, type AttributeValue } from '@aws-sdk/client-dynamodb';
import { dynamoDbClient } from '../lib/aws/clients';
import { Tables, type TableId } from '../lib/config/service';
import { hashApiKey, keyIdFromHash } from '../lib/keys/api-key';
import { ApiKeyStore } from '../lib/keys/api-key-store';
import { shardsFor, SlidingWindowRateLimiter } from '../lib/keys/rate-limiter';
import type { LocalStack } from '../lib/local/stack';
import { Scopes } from '../lib/config/service';
import { startTestStack } from '../test/support/local-stack';

export const TARGET_LARGEST_SHARE = 0.01;

export interface PartitionCount {
  table: TableId;
  /** absent: the table's own partition key */
  index?: string;
  key: string;
  writes: number;
  /** of all writes of the run */
  share: number;
  /** of the writes of its table (index writes included) */
  shareOfTable: number;
  /** keys of one patient, result or packet: their share reflects the demo chart's 5 patients */
  perRecord: boolean;
}

export interface PartitionResult {
  mix: { labSubmissions: number; resultsPerSubmission: number; formPackets: number; failures: number };
  statuses: Record<string, number>;
  totalWrites: number;
  writesByTable: Record<string, number>;
  /** the 12 busiest service-wide keys */
  busiest: PartitionCount[];
  /** the 5 busiest per-record keys */
  busiestPerRecord: PartitionCount[];
  largestServiceWide: PartitionCount;
  /** the named hot keys of issue 31: their largest shard */
  hotKeys: Array<{ family: string; partitions: number; writes: number; largest: PartitionCount | undefined }>;
  rateLimitShards: { lab: number; forms: number; failures: number };
  /** the container model the counter writes in the shares come from */
  containers: {
    count: number;
    model: string;
    /** the run's length on the model's clock (the plan at the issue's rates) */
    modelSeconds: number;
    /** counter writes of the model (in the shares) */
    modelWrites: number;
    /** the local authorizer's own counter writes (one container; not in the shares) */
    localOneContainer: { writes: number; largestKey: string; largestWrites: number; shareIfCounted: number };
    /** the same counter hits replayed by other numbers of containers: the largest counter key's share of all writes */
    sensitivity: Array<{ containers: number; counterWrites: number; largestKey: string; largestShare: number }>;
  };
  /** the per-key limit under the same container model: 1,250 offered in 1 s to a 1,000/s key */
  limitCheck: { limitPerSecond: number; offered: number; admitted: number; maxInAnyWindowMs1000: number; containers: number; held: boolean };
}

const PER_RECORD = /^(PATIENT#|RESULT#|RES#|PACKET#|LR#|lr\.|DOC#|NOTE#|IDEM#|RESOURCE#|LINK#|MATCHIDX)/;

/** Write command inputs -> the partitions they touch. */
export class WriteCounter {
  readonly counts = new Map<string, { table: TableId; index?: string; key: string; writes: number }>();
  /** the partition each item's entry is in now, per index (items written during the run) */
  private readonly indexKeyOf = new Map<string, string | undefined>();
  private readonly tableOf: Map<string, TableId>;

  constructor(physical: Record<TableId, string>) {
    this.tableOf = new Map(Object.entries(physical).map(([id, name]) => [name, id as TableId]));
  }

  private add(table: TableId, key: string, index?: string) {
    const id = `${table}|${index ?? ''}|${key}`;
    const entry = this.counts.get(id) ?? { table, ...(index ? { index } : {}), key, writes: 0 };
    entry.writes++;
    this.counts.set(id, entry);
  }

  record(command: string, input: Record<string, unknown>) {
    if (command === 'BatchWriteItemCommand') {
      const requests = (input.RequestItems ?? {}) as Record<string, Array<{ PutRequest?: { Item: Item }; DeleteRequest?: { Key: Item } }>>;
      for (const [name, list] of Object.entries(requests))
        for (const r of list)
          this.one(name, r.PutRequest ? 'PutItemCommand' : 'DeleteItemCommand', r.PutRequest ? { Item: r.PutRequest.Item } : { Key: r.DeleteRequest!.Key });
      return;
    }
    if (['PutItemCommand', 'UpdateItemCommand', 'DeleteItemCommand'].includes(command)) this.one(String(input.TableName), command, input);
  }

  private one(tableName: string, command: string, input: Record<string, unknown>) {
    const table = this.tableOf.get(tableName);
    if (!table) return;
    const def = Tables[table];
    const item = (input.Item ?? input.Key) as Item;
    const pk = item?.[def.partitionKey]?.S ?? item?.[def.partitionKey]?.N;
    if (pk === undefined) return;
    this.add(table, pk);
    const itemId = `${tableName}|${pk}|${def.sortKey ? (item[def.sortKey]?.S ?? item[def.sortKey]?.N ?? '') : ''}`;
    for (const index of def.indexes) {
      if (index.kind !== 'global' || !index.partitionKey) continue;
      // per index: two indexes on the same key attribute each hold the item (one entry each)
      const entryId = `${itemId}|${index.name}`;
      const before = this.indexKeyOf.get(entryId);
      let after: string | undefined = before;
      if (command === 'PutItemCommand') after = (input.Item as Item)[index.partitionKey]?.S;
      else if (command === 'DeleteItemCommand') after = undefined;
      else {
        const set = updatedAttributes(input);
        if (set.has(index.partitionKey)) after = set.get(index.partitionKey);
      }
      if (before !== undefined && before !== after) this.add(table, before, index.name);
      if (after !== undefined) this.add(table, after, index.name);
      this.indexKeyOf.set(entryId, after);
    }
  }
}

type Item = Record<string, AttributeValue>;

/** attribute -> new string value (undefined: removed) of an UpdateItem's SET / REMOVE. */
function updatedAttributes(input: Record<string, unknown>): Map<string, string | undefined> {
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  const values = (input.ExpressionAttributeValues ?? {}) as Item;
  const expression = String(input.UpdateExpression ?? '');
  const out = new Map<string, string | undefined>();
  const resolve = (n: string) => names[n] ?? n;
  for (const m of expression.matchAll(/([#\w]+)\s*=\s*(:\w+)/g)) out.set(resolve(m[1]!), values[m[2]!]?.S);
  const remove = /\bREMOVE\s+([^]*?)(?=\b(SET|ADD|DELETE)\b|$)/.exec(expression);
  if (remove) for (const n of remove[1]!.split(',')) out.set(resolve(n.trim()), undefined);
  return out;
}

const KEYS = {
  lab: { secret: 'bench-partitions-lab', partnerId: 'demo-lab', scopes: [Scopes.ingestResults], perMinute: 60_000 },
  forms: { secret: 'bench-partitions-forms', partnerId: 'demo-forms', scopes: [Scopes.ingestForms], perMinute: 30_000 },
  failures: { secret: 'bench-partitions-failures', partnerId: 'demo-staff', scopes: [Scopes.inboxReview], perMinute: 60_000 },
};

const PATIENTS = ['demo-patient-1', 'demo-patient-2', 'demo-patient-3', 'demo-patient-4', 'demo-patient-5'];

function labBody(n: number) {
  return {
    data: {
      senderID: 'demo-lab',
      patientID: PATIENTS[n % PATIENTS.length],
      accessionNumber: `PART-${n}-${Date.now()}`,
      recordNo: 'R-1001',
      status: 'final',
      ResultedDateUTC: '2024-03-01T09:30:00Z',
      results: [{ testName: 'Hemoglobin A1c', result: '7.2', units: '%', referenceRange: '4.0-5.6' }],
    },
  };
}

/** A packet naming no patient: intake queues it for matching (pending_match), the matcher moves it on. */
function formBody(n: number) {
  return {
    payload: {
      sourceSystemId: 'demo-forms',
      formId: 'intake-v2',
      submissionId: `part-${n}-${Date.now()}`,
      patient: { externalPatientId: `ext-part-${n}`, firstName: `Pat${n}`, lastName: `Benchmark${n}`, dob: '1970-01-01' },
      answers: { reasonForVisit: 'Follow-up' },
    },
  };
}

export async function measurePartitions(
  stack: LocalStack,
  options: { labSubmissions: number; concurrency: number; containers?: number; progress: (line: string) => void },
): Promise<PartitionResult> {
  const admin = new ApiKeyStore(new DynamoDBClient({ endpoint: stack.urls.dynamodb }), stack.tables.keys);
  const now = new Date();
  for (const k of Object.values(KEYS)) {
    const keyHash = hashApiKey(k.secret);
    await admin.putKey({
      keyHash,
      keyId: keyIdFromHash(keyHash),
      partnerId: k.partnerId,
      label: k.secret,
      scopes: k.scopes,
      status: 'active',
      rateLimit: k.perMinute,
      rateWindowSeconds: 60,
      createdAt: now.toISOString(),
    });
  }
  const counter = new WriteCounter(stack.tables);
  const localCounters = new WriteCounter(stack.tables);
  const db = dynamoDbClient();
  const containerCount = options.containers ?? options.concurrency;
  // the container model: one limiter per concurrency slot, on a client of its own whose writes are counted
  const modelDb = new DynamoDBClient({ endpoint: stack.urls.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  modelDb.middlewareStack.add(
    (next, context) => async (args) => {
      counter.record(String(context.commandName), args.input as Record<string, unknown>);
      return next(args);
    },
    { step: 'initialize', name: 'benchPartitionModelWrites' },
  );
  const containers = Array.from({ length: containerCount }, () => new SlidingWindowRateLimiter(modelDb, stack.tables.rateLimit));
  const modelT0 = Math.floor(Date.now() / 1000) * 1000 + 60_000;
  const middlewareName = 'benchPartitionWrites';
  db.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as Record<string, unknown>;
      (input.TableName === stack.tables.rateLimit ? localCounters : counter).record(String(context.commandName), input);
      return next(args);
    },
    { step: 'initialize', name: middlewareName },
  );
  const statuses: Record<string, number> = {};
  // the mix 2 : 1 : 2, interleaved
  const plan: Array<{ key: keyof typeof KEYS; send: () => Promise<Response> }> = [];
  const post = (path: string, secret: string, body: unknown) => () =>
    fetch(stack.urls.api + path, { method: 'POST', headers: { 'x-api-key': secret, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const forms = Math.round(options.labSubmissions / 2);
  for (let i = 0; i < options.labSubmissions; i++) {
    plan.push({ key: 'lab', send: post('/receiveTestData', KEYS.lab.secret, labBody(i)) });
    // an audited failure: an inbox read of an unknown packet (404, audited under the day: UNRESOLVED)
    const unknownPacket = `fp_${createHash('sha256').update(`partitions-${i}-${now.toISOString()}`).digest('hex').slice(0, 32)}`;
    plan.push({ key: 'failures', send: () => fetch(`${stack.urls.api}/interopInbox/${unknownPacket}`, { headers: { 'x-api-key': KEYS.failures.secret } }) });
    if (i % 2 === 0 && i / 2 < forms) plan.push({ key: 'forms', send: post('/receiveFormIntakeScope', KEYS.forms.secret, formBody(i / 2)) });
  }
  let next = 0;
  let done = 0;
  try {
    await Promise.all(
      Array.from({ length: options.concurrency }, async (_v, slot) => {
        while (next < plan.length) {
          const j = next++;
          const entry = plan[j]!;
          const k = KEYS[entry.key];
          // the request's counter write as the container of this slot makes it, at the issue's rates
          const [res] = await Promise.all([
            entry.send(),
            containers[slot % containerCount]!.hit(modelSubject(k.secret), k.perMinute, 60, new Date(modelT0 + (j * 1000) / MIX_PER_SECOND)),
          ]);
          await res.arrayBuffer();
          statuses[res.status] = (statuses[res.status] ?? 0) + 1;
          if (++done % 500 === 0) options.progress(`[partitions] ${done} of ${plan.length} requests`);
        }
      }),
    );
    // the matcher (background worker) moves the packets on: wait until the writes stop
    let last = -1;
    for (let i = 0; i < 60; i++) {
      const total = [...counter.counts.values()].reduce((s, c) => s + c.writes, 0);
      if (total === last) break;
      last = total;
      await new Promise((r) => setTimeout(r, 2000));
    }
  } finally {
    db.middlewareStack.remove(middlewareName);
  }
  modelDb.destroy();
  // the limit check writes through a client that is not counted (its writes are not part of the mix)
  const limitDb = new DynamoDBClient({ endpoint: stack.urls.dynamodb, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  const limitCheck = await checkKeyLimit(containerCount, (random) => new SlidingWindowRateLimiter(limitDb, stack.tables.rateLimit, random)).finally(() =>
    limitDb.destroy(),
  );
  const modelWrites = [...counter.counts.values()].filter((c) => c.table === 'rateLimit').reduce((s, c) => s + c.writes, 0);
  const local = [...localCounters.counts.values()].sort((a, b) => b.writes - a.writes);
  const localWrites = local.reduce((s, c) => s + c.writes, 0);
  const otherWrites = [...counter.counts.values()].filter((c) => c.table !== 'rateLimit').reduce((s, c) => s + c.writes, 0);
  // how the counters' largest share moves with the number of containers: the same hits, replayed alone
  const sensitivity: PartitionResult['containers']['sensitivity'] = [];
  for (const count of SENSITIVITY_CONTAINERS) {
    const replay = new WriteCounter(stack.tables);
    const replayDb = new DynamoDBClient({
      endpoint: stack.urls.dynamodb,
      region: 'us-east-1',
      credentials: { accessKeyId: 'local', secretAccessKey: 'local' },
    });
    replayDb.middlewareStack.add(
      (next, context) => async (args) => {
        replay.record(String(context.commandName), args.input as Record<string, unknown>);
        return next(args);
      },
      { step: 'initialize', name: 'benchPartitionSensitivity' },
    );
    try {
      const pool = Array.from({ length: count }, () => new SlidingWindowRateLimiter(replayDb, stack.tables.rateLimit));
      for (let j = 0; j < plan.length; j += count)
        await Promise.all(
          // request j + i goes to container (i + round) mod count: every container serves every key in turn
          pool.map((_limiter, i) => {
            const entry = plan[j + i];
            if (!entry) return undefined;
            const limiter = pool[(i + j / count) % count]!;
            const k = KEYS[entry.key];
            return limiter.hit(`x${count}.${modelSubject(k.secret)}`, k.perMinute, 60, new Date(modelT0 + ((j + i) * 1000) / MIX_PER_SECOND));
          }),
        );
    } finally {
      replayDb.destroy();
    }
    const counts = [...replay.counts.values()].sort((a, b) => b.writes - a.writes);
    const writes = counts.reduce((s, c) => s + c.writes, 0);
    sensitivity.push({
      containers: count,
      counterWrites: writes,
      largestKey: counts[0]?.key ?? '-',
      largestShare: counts[0] ? counts[0].writes / (otherWrites + writes) : 0,
    });
  }

  const all = [...counter.counts.values()];
  const totalWrites = all.reduce((s, c) => s + c.writes, 0);
  const writesByTable: Record<string, number> = {};
  for (const c of all) writesByTable[c.table] = (writesByTable[c.table] ?? 0) + c.writes;
  const rows: PartitionCount[] = all
    .map((c) => ({
      ...c,
      share: c.writes / totalWrites,
      shareOfTable: c.writes / writesByTable[c.table]!,
      perRecord: PER_RECORD.test(c.key),
    }))
    .sort((a, b) => b.writes - a.writes);
  const serviceWide = rows.filter((r) => !r.perRecord);
  const families: Array<[string, (r: PartitionCount) => boolean]> = [
    ['forms index STATE#pending_match', (r) => r.table === 'forms' && r.key.startsWith('STATE#pending_match')],
    ['forms index STATE#pending_review', (r) => r.table === 'forms' && r.key.startsWith('STATE#pending_review')],
    ['audit UNRESOLVED#<day>', (r) => r.table === 'audit' && r.key.startsWith('UNRESOLVED#')],
    [
      `rate limit of the lab key (1,000/s), ${containerCount} containers`,
      (r) => r.table === 'rateLimit' && r.key.startsWith(`${modelSubject(KEYS.lab.secret)}#`),
    ],
    ['results NOTIFY#PENDING', (r) => r.table === 'results' && r.key.startsWith('NOTIFY#')],
    ['chart HELD', (r) => r.table === 'chart' && r.key.startsWith('HELD')],
  ];
  return {
    mix: { labSubmissions: options.labSubmissions, resultsPerSubmission: 1, formPackets: forms, failures: options.labSubmissions },
    statuses,
    totalWrites,
    writesByTable,
    busiest: serviceWide.slice(0, 12),
    busiestPerRecord: rows.filter((r) => r.perRecord).slice(0, 5),
    largestServiceWide: serviceWide[0]!,
    hotKeys: families.map(([family, match]) => {
      const matched = rows.filter(match);
      return { family, partitions: matched.length, writes: matched.reduce((s, r) => s + r.writes, 0), largest: matched[0] };
    }),
    rateLimitShards: { lab: shardsFor(KEYS.lab.perMinute, 60), forms: shardsFor(KEYS.forms.perMinute, 60), failures: shardsFor(KEYS.failures.perMinute, 60) },
    containers: {
      count: containerCount,
      model: `${containerCount} simulated authorizer containers (one rate limiter each, one per concurrency slot of the load), clock at the issue's rates (${MIX_PER_SECOND.toLocaleString('en-US')} requests a second)`,
      modelSeconds: plan.length / MIX_PER_SECOND,
      modelWrites,
      localOneContainer: {
        writes: localWrites,
        largestKey: local[0]?.key ?? '-',
        largestWrites: local[0]?.writes ?? 0,
        shareIfCounted: local[0] ? local[0].writes / (totalWrites - modelWrites + localWrites) : 0,
      },
      sensitivity,
    },
    limitCheck,
  };
}

/**
 * Containers for the sensitivity replay: 2,500 requests a second x ~10 ms per authorizer invocation
 * in Lambda (an assumption: one DynamoDB call in region plus the function) = 25 at once.
 */
const SENSITIVITY_CONTAINERS = [25];

/** requests a second of the issue's mix: 1,000 lab results + 500 form packets + 1,000 audited failures */
const MIX_PER_SECOND = 2500;

/** The container model's rate-limit subject for a key (apart from the local authorizer's `key#<keyId>`). */
function modelSubject(secret: string): string {
  return `containers:key#${keyIdFromHash(hashApiKey(secret))}`;
}

/** Largest number of instants inside any half-open interval [t, t + windowMs). */
export function maxInAnyWindow(instants: number[], windowMs: number): number {
  const times = [...instants].sort((a, b) => a - b);
  let best = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= windowMs) start++;
    best = Math.max(best, end - start + 1);
  }
  return best;
}

/**
 * The per-key limit under the container model: a key limited to 1,000 a second (shardsFor splits
 * it over counter shards), 1,250 requests offered over one second by `containers` limiters (one
 * request per container per round, clocks spread over the second), then half a second more at the
 * same rate; the admitted requests' clocks are counted in every 1,000 ms interval.
 */
async function checkKeyLimit(containers: number, limiter: (random: () => number) => SlidingWindowRateLimiter): Promise<PartitionResult['limitCheck']> {
  let seed = 31;
  const random = () => ((seed = (seed * 16807) % 2147483647) - 1) / 2147483646;
  const pool = Array.from({ length: containers }, () => limiter(random));
  const subject = `containers:limit-check-${Date.now().toString(36)}`;
  const limit = 1000;
  const offered = 1875;
  const t0 = Math.floor(Date.now() / 1000) * 1000 + 120_000;
  const admitted: number[] = [];
  for (let j = 0; j < offered; j += containers) {
    const times = pool.map((_c, i) => t0 + Math.floor(((j + i) * 1000) / 1250)).filter((_t, i) => j + i < offered);
    const states = await Promise.all(times.map((t, i) => pool[i]!.hit(subject, limit, 1, new Date(t))));
    states.forEach((s, i) => {
      if (!s.exceeded) admitted.push(times[i]!);
    });
  }
  const max = maxInAnyWindow(admitted, 1000);
  return { limitPerSecond: limit, offered, admitted: admitted.length, maxInAnyWindowMs1000: max, containers, held: max <= limit };
}

const pct = (x: number) => `${(x * 100).toFixed(2)} %`;

export function renderPartitions(r: PartitionResult): string[] {
  const out: string[] = [];
  out.push(
    `Mix: ${r.mix.labSubmissions} lab submissions (1 result each) : ${r.mix.formPackets} form packets : ${r.mix.failures} audited failures (404 inbox reads of unknown packets); ` +
      `statuses ${Object.entries(r.statuses)
        .map(([s, n]) => `${s}×${n}`)
        .join(', ')}; ${r.totalWrites} writes (${Object.entries(r.writesByTable)
        .map(([t, n]) => `${t} ${n}`)
        .join(', ')}).`,
  );
  out.push('');
  out.push('| Hot key of issue 31 | partitions written | writes | largest partition | its share of all writes | of its table |');
  out.push('| --- | --- | --- | --- | --- | --- |');
  for (const h of r.hotKeys)
    out.push(
      `| ${h.family} | ${h.partitions} | ${h.writes} | ${h.largest ? `\`${h.largest.index ? `${h.largest.index}: ` : ''}${h.largest.key}\`` : '-'} | ${h.largest ? pct(h.largest.share) : '-'} | ${h.largest ? pct(h.largest.shareOfTable) : '-'} |`,
    );
  out.push('');
  out.push('| Busiest service-wide partition keys | table (index) | writes | share of all writes | of its table |');
  out.push('| --- | --- | --- | --- | --- |');
  for (const c of r.busiest)
    out.push(`| \`${c.key}\` | ${c.table}${c.index ? ` (${c.index})` : ''} | ${c.writes} | ${pct(c.share)} | ${pct(c.shareOfTable)} |`);
  out.push('');
  out.push(
    `Per-record keys (one patient / result / packet; 5 demo patients here, so each takes about a fifth of its kind): busiest ${r.busiestPerRecord
      .map((c) => `\`${c.key}\` (${c.table}${c.index ? ` ${c.index}` : ''}) ${pct(c.share)}`)
      .join(', ')}.`,
  );
  out.push('');
  const c = r.containers;
  out.push(
    `Rate-limit counters: the writes above come from the container model (${c.model}): ${c.modelWrites} counter writes over ${c.modelSeconds.toFixed(1)} s of the model's clock. A container counts in one shard for a visit of at most 16 admissions (never across a 1 s slot), then moves to the less written of two shards picked at random, so within one second ${c.count} containers spread a key's writes over its shards; the share over a short run is the one that matters for a hot partition. ` +
      `The local authorizer (one container, the machine's rate) wrote ${c.localOneContainer.writes} counter writes of its own, not in the shares; counted instead, its busiest \`${c.localOneContainer.largestKey}\` (${c.localOneContainer.largestWrites} writes) would be ${pct(c.localOneContainer.shareIfCounted)}.`,
  );
  for (const x of c.sensitivity)
    out.push(
      `\nThe same counter hits replayed alone by ${x.containers} containers (2,500 requests a second x ~10 ms per authorizer invocation in Lambda, an assumption): largest counter key \`${x.largestKey}\` ${pct(x.largestShare)} of all writes (${x.counterWrites} counter writes).`,
    );
  out.push('');
  const l = r.limitCheck;
  out.push(
    `Per-key limit under the same model: a key limited to ${l.limitPerSecond.toLocaleString('en-US')} a second, ${l.offered.toLocaleString('en-US')} requests offered over 1.5 s (1,250 a second) by ${l.containers} containers: ${l.admitted.toLocaleString('en-US')} admitted, at most **${l.maxInAnyWindowMs1000.toLocaleString('en-US')} in any 1,000 ms interval** (${l.held ? 'the limit held' : '**the limit did not hold**'}). lib/keys/rate-limiter.test.ts checks the same with 25 containers ("1,250 requests in one second against 1,000/s: never more than 1,000 in any second").`,
  );
  return out;
}

if (require.main === module) {
  const quick = process.argv.includes('--quick');
  void (async () => {
    const stack = await startTestStack({ prefix: 'interop-partitions', backgroundWorkers: true, env: { LOG_LEVEL: 'warn' } });
    try {
      const result = await measurePartitions(stack, { labSubmissions: quick ? 100 : 1000, concurrency: 8, progress: (l) => console.error(l) });
      writeFileSync(path.join(__dirname, 'partitions.json'), JSON.stringify(result, null, 2) + '\n');
      console.log(renderPartitions(result).join('\n'));
    } finally {
      await stack.close();
    }
  })().catch((error) => {
    console.error(error);
    process.exitCode = 1;
  });
}
