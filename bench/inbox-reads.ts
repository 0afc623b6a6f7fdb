/**
 * Reads per page of the interop inbox listing (GET /interopInbox, lib/forms/inbox.ts listInbox):
 * DynamoDB Queries, items read and read units of the first page and of a page deep in the list,
 * for pages of 100 and of 25 (the default), over PACKETS packets waiting in pending_review.
 *
 * The two state indexes of the forms table, the same packets and the same code
 * (PacketStateReader.queryByState):
 *   byStateSummary  projection INCLUDE of the listing's attributes (SUMMARY_ATTRIBUTES): what the
 *                   listing and the sweeper read
 *   byState         projection ALL, retiring (README "Releases that move an index"): an entry is the
 *                   whole packet, envelope (`content`) and history included, and DynamoDB bills a
 *                   Query by the size of the entries it reads, whatever ProjectionExpression returns.
 *                   Read here the way production reads it while byStateSummary backfills: the
 *                   refusal DynamoDB gives then is injected, so the reader falls back to byState.
 * The pages of both are compared item by item (they must be identical).
 *
 * Packets are built by receiveFormPacket with the deployed wiring (HMACs, envelope encryption
 * against the local KMS), written in createPacket's item layout with BatchWriteItem (as
 * bench/scale.ts seeds). Read units: ReturnConsumedCapacity TOTAL on each Query, priced by dynalite
 * as DynamoDB does (per Query, ceil(bytes / 4 KB), half for eventually consistent reads; dynalite
 * charges nothing for an empty Query, DynamoDB 0.5).
 *
 *   npx tsx bench/inbox-reads.ts [--packets 3000]
 */
import { BatchWriteItemCommand, DynamoDBClient, type WriteRequest } from '@aws-sdk/client-dynamodb';
import { marshall } from '../lib/aws/attribute-values';
import { listInbox, type InboxPage } from '../lib/forms/inbox';
import type { Submitter } from '../lib/forms/intake';
import { PacketStateReader } from '../lib/forms/packet-reader';
import { LEGACY_STATE_INDEX, PACKET_SK, STATE_INDEX, packetPk } from '../lib/forms/packet-store';
import type { PacketRecord } from '../lib/forms/types';
import { buildInboxPackets } from './inbox-packets';
import { setLogSink } from '../lib/observability/logger';
import { startTestStack } from '../test/support/local-stack';

interface Reads {
  queries: number;
  items: number;
  readUnits: number;
}

interface PageReads extends Reads {
  page: 'first' | 'deep';
  limit: number;
  returned: number;
}

const SUBMITTER: Submitter = { keyId: 'inbox-reads', partnerId: 'demo-forms', allowedFormSourceIds: ['demo-form-tool'] };

function buildPackets(count: number): Promise<PacketRecord[]> {
  return buildInboxPackets(0, count, 'reads', SUBMITTER);
}

async function write(db: DynamoDBClient, table: string, records: readonly PacketRecord[]): Promise<void> {
  const requests: WriteRequest[] = records.map((record) => ({
    PutRequest: { Item: marshall({ pk: packetPk(record.packetId), sk: PACKET_SK, ...record }, { removeUndefinedValues: true }) },
  }));
  for (let i = 0; i < requests.length; i += 25) {
    let pending = requests.slice(i, i + 25);
    for (let attempt = 0; pending.length > 0; attempt++) {
      if (attempt > 20) throw new Error('seeding: unprocessed items remain');
      const out = await db.send(new BatchWriteItemCommand({ RequestItems: { [table]: pending } }));
      pending = out.UnprocessedItems?.[table] ?? [];
    }
  }
}

/** A DynamoDB client that asks every Query for its consumed capacity and adds it up. */
function meteredClient(endpoint: string): { db: DynamoDBClient; take: () => Reads } {
  const db = new DynamoDBClient({ endpoint, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } });
  let reads: Reads = { queries: 0, items: 0, readUnits: 0 };
  db.middlewareStack.add(
    (next, context) => async (args) => {
      if (context.commandName !== 'QueryCommand') return next(args);
      (args.input as { ReturnConsumedCapacity?: string }).ReturnConsumedCapacity = 'TOTAL';
      const out = await next(args);
      const body = out.output as { ScannedCount?: number; ConsumedCapacity?: { CapacityUnits?: number } };
      reads.queries++;
      reads.items += body.ScannedCount ?? 0;
      reads.readUnits += body.ConsumedCapacity?.CapacityUnits ?? 0;
      return out;
    },
    { step: 'initialize', name: 'meterQueries' },
  );
  return {
    db,
    take: () => {
      const taken = reads;
      reads = { queries: 0, items: 0, readUnits: 0 };
      return taken;
    },
  };
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const packets = Number(argv[argv.indexOf('--packets') + 1] ?? 3000) || 3000;
  setLogSink(() => undefined);
  const stack = await startTestStack({ prefix: 'interop-inbox-reads', env: { LOG_LEVEL: 'error' } });
  try {
    const metered = meteredClient(stack.urls.dynamodb);
    const table = stack.tables.forms;
    // the retiring index, read as production reads it while byStateSummary backfills: DynamoDB refuses the new index
    let backfilling = false;
    metered.db.middlewareStack.add(
      (next, context) => async (args) => {
        if (backfilling && context.commandName === 'QueryCommand' && (args.input as { IndexName?: string }).IndexName === STATE_INDEX)
          throw Object.assign(new Error(`Cannot read from backfilling global secondary index: ${STATE_INDEX}`), { name: 'ValidationException' });
        return next(args);
      },
      { step: 'initialize', name: 'summaryIndexBackfilling', priority: 'high' },
    );
    const records = await buildPackets(packets);
    await write(metered.db, table, records);
    const sizes = records.map((r) => Buffer.byteLength(JSON.stringify(r)));
    process.stdout.write(`${packets} packets in pending_review; packet as JSON: median ${sizes.sort((a, b) => a - b)[sizes.length >> 1]} bytes\n`);

    const results: Record<string, PageReads[]> = {};
    const pages: Record<string, InboxPage[]> = {};
    for (const [layout, legacy] of [
      [`${STATE_INDEX} (INCLUDE)`, false],
      [`${LEGACY_STATE_INDEX} (ALL, retiring)`, true],
    ] as const) {
      backfilling = legacy;
      const store = new PacketStateReader(metered.db, table);
      const rows: PageReads[] = [];
      const seen: InboxPage[] = [];
      for (const limit of [100, 25]) {
        metered.take();
        const first = await listInbox({ store: () => store }, { state: 'pending_review', limit });
        rows.push({ page: 'first', limit, returned: first.items.length, ...metered.take() });
        seen.push(first);
        // a page deep in the list: walk to the middle, then measure one page
        let cursor = first.nextCursor;
        for (let walked = limit; cursor && walked < packets / 2; walked += limit)
          cursor = (await listInbox({ store: () => store }, { state: 'pending_review', limit, cursor })).nextCursor;
        metered.take();
        const deep = await listInbox({ store: () => store }, { state: 'pending_review', limit, cursor });
        rows.push({ page: 'deep', limit, returned: deep.items.length, ...metered.take() });
        seen.push(deep);
      }
      results[layout] = rows;
      pages[layout] = seen;
    }
    const [summaryPages, legacyPages] = Object.values(pages);
    const same = JSON.stringify(summaryPages) === JSON.stringify(legacyPages);
    process.stdout.write(`pages identical from both indexes (items and cursors): ${same}\n`);
    process.stdout.write('| index projection | page | limit | returned | Queries | items read | read units |\n| --- | --- | --- | --- | --- | --- | --- |\n');
    for (const [layout, rows] of Object.entries(results))
      for (const r of rows) process.stdout.write(`| ${layout} | ${r.page} | ${r.limit} | ${r.returned} | ${r.queries} | ${r.items} | ${r.readUnits} |\n`);
    if (!same) process.exitCode = 1;
  } finally {
    await stack.close();
  }
}

if (require.main === module) {
  main().catch((error: Error) => {
    process.stderr.write(`inbox-reads failed: ${error.stack ?? error.message}\n`);
    process.exit(1);
  });
}
