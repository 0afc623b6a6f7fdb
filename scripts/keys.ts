/**
 * `npm run keys -- create|list|revoke`: manage API keys. Keys are stored as SHA-256 hashes; the
 * secret is printed once, on create, and never again.
 *
 *   npm run keys -- create --partner demo-lab --scopes interop:ingest:results[,interop:export:hl7] [--label NAME] [--rate-limit N --window S]
 *   npm run keys -- list
 *   npm run keys -- revoke key_0123456789ab
 *
 * Target: the running local stack (.local/endpoints.json), or the environment (KEYS_TABLE and the
 * usual AWS credentials/region) for a deployed stage.
 */
import { parseArgs } from 'node:util';
import { ALL_SCOPES, type Scope } from '../lib/config/service';
import { dynamoDbClient } from '../lib/aws/clients';
import { tableName } from '../lib/dynamo/table-names';
import { generateApiKeySecret, hashApiKey, keyIdFromHash } from '../lib/keys/api-key';
import { ApiKeyStore } from '../lib/keys/api-key-store';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  const { values, positionals } = parseArgs({
    args: rest,
    allowPositionals: true,
    options: { partner: { type: 'string' }, scopes: { type: 'string' }, label: { type: 'string' }, 'rate-limit': { type: 'string' }, window: { type: 'string' } },
  });
  useLocalStackEnvironment();
  const store = new ApiKeyStore(dynamoDbClient(), tableName('keys'));
  switch (command) {
    case 'create': {
      const partnerId = values.partner;
      const scopes = (values.scopes ?? '').split(',').map((s) => s.trim()).filter(Boolean) as Scope[];
      const unknown = scopes.filter((s) => !ALL_SCOPES.includes(s));
      if (!partnerId || scopes.length === 0 || unknown.length) {
        process.stderr.write(`usage: keys create --partner ID --scopes ${ALL_SCOPES.join(',')}${unknown.length ? `\nunknown scopes: ${unknown.join(', ')}` : ''}\n`);
        return 2;
      }
      if (!(await store.getPartner(partnerId))) {
        process.stderr.write(`partner ${partnerId} does not exist\n`);
        return 2;
      }
      const secret = generateApiKeySecret();
      const keyHash = hashApiKey(secret);
      const rateLimit = values['rate-limit'] ? Number(values['rate-limit']) : undefined;
      const rateWindowSeconds = values.window ? Number(values.window) : undefined;
      await store.putKey({ keyHash, keyId: keyIdFromHash(keyHash), partnerId, label: values.label ?? partnerId, scopes, status: 'active', rateLimit, rateWindowSeconds, createdAt: new Date().toISOString() });
      process.stdout.write(`created ${keyIdFromHash(keyHash)} for ${partnerId} (${scopes.join(' ')})\nsecret (shown once): ${secret}\n`);
      return 0;
    }
    case 'list': {
      for (const k of await store.listKeys()) {
        process.stdout.write(`${k.keyId}\t${k.status}\t${k.partnerId}\t${k.scopes.join(',')}\t${k.rateLimit ?? '-'}\t${k.label}\t${k.createdAt}\n`);
      }
      return 0;
    }
    case 'revoke': {
      const keyId = positionals[0];
      const key = (await store.listKeys()).find((k) => k.keyId === keyId);
      if (!key) {
        process.stderr.write(`no key ${keyId ?? '(missing key id)'}\n`);
        return 2;
      }
      await store.revokeKey(key.keyHash, new Date());
      process.stdout.write(`revoked ${keyId}\n`);
      return 0;
    }
    default:
      process.stderr.write('usage: npm run keys -- create|list|revoke\n');
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`${error.message}\n`);
    process.exit(1);
  },
);
