/**
 * Public sample messages written by other tools (test/hl7/samples, origins and licences in its README)
 * posted to POST /receiveHl7 through the local API Gateway: every one is accepted (AA).
 * A partner key allowed to send for every sample's facility (each listed exactly) is used, so the samples' own MSH-4 stay untouched.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { dynamoDbClient } from '../../lib/aws/clients';
import { Env } from '../../lib/config/service';
import { parseHl7, valueAt } from '../../lib/hl7/parser';
import { hashApiKey, keyIdFromHash } from '../../lib/keys/api-key';
import { ApiKeyStore } from '../../lib/keys/api-key-store';
import type { LocalStack } from '../../lib/local/stack';
import { call, startTestStack } from '../support/local-stack';

const SAMPLES = join(__dirname, '..', 'hl7', 'samples');
const files = readdirSync(SAMPLES, { withFileTypes: true })
  .filter((d) => d.isDirectory())
  .flatMap((d) =>
    readdirSync(join(SAMPLES, d.name))
      .filter((f) => f.endsWith('.hl7'))
      .map((f) => join(d.name, f)),
  )
  .sort();
/** MSH-4 (HD-1: what intake compares) of every message of every sample, each sender id once. */
function sampleSenders(): string[] {
  const senders = new Set<string>();
  for (const file of files) {
    const parsed = parseHl7(readFileSync(join(SAMPLES, file)));
    const messages = parsed.kind === 'message' ? [parsed.message] : parsed.batch.messages.flatMap((entry) => (entry.ok ? [entry.message] : []));
    for (const message of messages) senders.add(valueAt(message.segments[0], 4));
  }
  senders.delete('');
  return [...senders].sort();
}

const KEY = 'sample-senders-key';

let stack: LocalStack;
beforeAll(async () => {
  // many public samples are MSH-11 T (training) or D (debugging): this stage is configured to take them
  process.env[Env.hl7AcceptProcessingIds] = 'P,T,D';
  stack = await startTestStack();
  const store = new ApiKeyStore(dynamoDbClient(), stack.tables.keys);
  await store.putPartner(
    // every sender id of the samples (MSH-4, else MSH-3), exactly: a wildcard allows nothing
    { partnerId: 'sample-senders', name: 'Public sample senders', policy: 'active', rateLimit: 1000, rateWindowSeconds: 60, allowedSenderIds: sampleSenders() },
    { ifMissing: true },
  );
  const keyHash = hashApiKey(KEY);
  await store.putKey({
    keyHash,
    keyId: keyIdFromHash(keyHash),
    partnerId: 'sample-senders',
    label: KEY,
    scopes: ['interop:ingest:hl7'],
    status: 'active',
    createdAt: new Date().toISOString(),
  });
});
afterAll(async () => {
  delete process.env[Env.hl7AcceptProcessingIds];
  await stack?.close();
});

it('holds at least 20 samples from at least 5 senders in at least 3 HL7 versions', () => {
  expect(files.length).toBeGreaterThanOrEqual(20);
  const headers = files.map((file) => {
    const parsed = parseHl7(readFileSync(join(SAMPLES, file)));
    const entry = parsed.kind === 'message' ? { ok: true as const, message: parsed.message } : parsed.batch.messages[0]!;
    if (!entry.ok) throw new Error(`${file} does not parse`);
    const msh = entry.message.segments[0];
    return { sender: valueAt(msh, 4) || valueAt(msh, 3), version: valueAt(msh, 12) };
  });
  expect(new Set(headers.map((h) => h.sender)).size).toBeGreaterThanOrEqual(5);
  expect(new Set(headers.map((h) => h.version)).size).toBeGreaterThanOrEqual(3);
});

it.each(files)('%s -> AA', async (file) => {
  const body = readFileSync(join(SAMPLES, file));
  const res = await call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': KEY, 'content-type': 'application/hl7-v2' }, body });
  expect(res.status).toBe(200);
  const msas = res.text.split('\r').filter((line) => line.startsWith('MSA|') || line.startsWith('ERR|'));
  // AA, or CA when the sample asks for enhanced mode without an application ACK on success (MSH-15/16 AL/ER)
  // an ERR only as a warning that a time which is no real time was left out (102; ERR-4 W from v2.5 on)
  const timeWarning = (l: string) =>
    l.startsWith('ERR|') && /\b102\b/.test(l) && /no valid HL7 date-time/.test(l) && ['W', undefined].includes(l.split('|')[4]);
  expect(msas.filter((l) => (l.startsWith('ERR|') && !timeWarning(l)) || (l.startsWith('MSA|') && !/^MSA\|(AA|CA)\|/.test(l)))).toEqual([]);
  expect(msas.filter((l) => l.startsWith('MSA|')).length).toBeGreaterThan(0);
});
