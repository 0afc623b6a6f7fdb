/**
 * The replay of one page's DynamoDB calls (bench/scale-child.ts, issue 31 item 4): the same
 * commands with the same inputs, through the same client, in the same order, concurrent where the
 * page ran them concurrently. Timed alone right after the page, in the same container, it is what
 * the emulator takes for that page at that size; the page's time over it is what our code adds.
 */
import * as dynamodb from '@aws-sdk/client-dynamodb';
import { concurrencyGroups, type CallRecord } from './aws-calls';

/** One DynamoDB call of a page, as sent (input after the read-unit middleware), for the replay. */
export interface PageCall {
  command: string;
  input: Record<string, unknown>;
  startNs: bigint;
  endNs?: bigint;
}

/**
 * The page's calls again, alone: every command built before the clock starts, then sent through
 * `client` group by group (calls that overlapped in time on the page are sent together), errors
 * ignored (a replayed conditional write may fail its condition: still one round trip). Returns ms.
 */
export async function replayCalls(client: { send(command: never): Promise<unknown> }, calls: readonly PageCall[]): Promise<number> {
  const groups = concurrencyGroups(calls.map((c) => ({ ...c, service: 'dynamodb', op: c.command, phase: 'handler' }) as CallRecord));
  const commands = calls.map((c) => {
    const Ctor = (dynamodb as unknown as Record<string, new (input: unknown) => never>)[c.command];
    if (!Ctor) throw new Error(`replay: no command ${c.command}`);
    return new Ctor(structuredClone(c.input));
  });
  const send = (command: never) => client.send(command).catch(() => undefined);
  const t0 = process.hrtime.bigint();
  let i = 0;
  while (i < commands.length) {
    const group = groups[i];
    const batch: never[] = [];
    while (i < commands.length && groups[i] === group) batch.push(commands[i++]!);
    await (batch.length === 1 ? send(batch[0]!) : Promise.all(batch.map(send)));
  }
  return Number(process.hrtime.bigint() - t0) / 1e6;
}
