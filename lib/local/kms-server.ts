/**
 * A small KMS-compatible endpoint for local runs and tests, so production code keeps using the
 * real @aws-sdk/client-kms KMSClient (pointed here through `endpoint`).
 *
 * Protocol: AWS JSON 1.1, as the SDK speaks it. POST /, `X-Amz-Target: TrentService.<Op>`,
 * `Content-Type: application/x-amz-json-1.1`, blobs as base64 strings, timestamps as epoch
 * seconds. Errors are HTTP 4xx/5xx with `{"__type": "<ErrorName>", "message": "..."}`, which the
 * SDK turns into the modelled exception classes (InvalidCiphertextException, NotFoundException,
 * ...).
 *
 * Operations: GenerateDataKey (KeySpec AES_256 | AES_128, or NumberOfBytes 1..1024),
 * GenerateDataKeyWithoutPlaintext, Encrypt, Decrypt, DescribeKey, CreateKey, CreateAlias,
 * ListAliases. Symmetric ENCRYPT_DECRYPT keys only.
 *
 * Authentication: NOT real. The Authorization header must be present (the SDK always signs), but
 * the SigV4 signature is not verified and there are no key policies or grants. Anyone who can
 * reach the port can use the keys, which is why the server binds to 127.0.0.1 only.
 *
 * Ciphertext blob (own format, version 1):
 *
 *   offset 0      1 byte   format version (0x01)
 *   offset 1      1 byte   n = length of the key id
 *   offset 2      n bytes  key id (ASCII, the key's UUID)
 *   offset 2+n   12 bytes  AES-GCM IV (random)
 *   offset 14+n  16 bytes  AES-GCM tag
 *   offset 30+n   rest     ciphertext
 *
 *   AES-256-GCM under the key's 256-bit master key, with
 *   AAD = blob[0 .. 2+n) || UTF-8(canonical JSON of the EncryptionContext, sorted keys)
 *
 * so Decrypt succeeds only with the same encryption context (in any key order), as in KMS; a
 * different or missing context, or any altered byte, gives InvalidCiphertextException.
 *
 * Master keys: random 32 bytes per key. With `dataDir` they are persisted (with aliases) in
 * `<dataDir>/kms-keys.json` (directory 0700, file 0600, atomic rename) so a restarted server
 * still decrypts old ciphertexts. The file holds key material in clear: local development only,
 * keep it out of git (.local/ is ignored). Without `dataDir` keys live in memory (tests).
 *
 * Nothing is logged; error messages never echo plaintext or encryption context.
 */

import { createCipheriv, createDecipheriv, randomBytes, randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { canonicalContext } from '../crypto/canonical-context';
import { decodeBase64Strict } from '../crypto/envelope-format';

export interface KmsServerOptions {
  /** must be '127.0.0.1' (the default); anything else is refused */
  host?: string;
  /** 0 picks a free port */
  port: number;
  /** directory for persisted master keys, e.g. '.local/kms'; in memory when absent */
  dataDir?: string;
  /** key ids, key ARNs or aliases ('alias/interop-local') to create unless they already exist */
  keys?: string[];
  /** region used in ARNs; default 'us-east-1' */
  region?: string;
  /** account used in ARNs; default '000000000000' */
  accountId?: string;
}

export interface KmsServer {
  /** http://127.0.0.1:<port> — pass as the KMSClient endpoint */
  url: string;
  port: number;
  /** key ARN behind each entry of `options.keys`, in the same order */
  keyArns: string[];
  close(): Promise<void>;
}

export const KMS_SERVER_HOST = '127.0.0.1';
export const KMS_BLOB_VERSION = 0x01;
const MASTER_KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;
const MAX_REQUEST_BYTES = 1024 * 1024;
const MAX_ENCRYPT_PLAINTEXT = 4096;
const MAX_CIPHERTEXT_BLOB = 6144;
const KEYS_FILE = 'kms-keys.json';
const KEYS_FILE_FORMAT = 'local-kms/v1';
const CONTENT_TYPE = 'application/x-amz-json-1.1';
const ALIAS_NAME = /^alias\/[a-zA-Z0-9/_-]{1,250}$/;
const KEY_ID = /^[A-Za-z0-9-]{1,64}$/;
const KEY_ARN = /^arn:aws[a-z-]*:kms:[^:]*:[^:]*:key\/([^/]+)$/;
const ALIAS_ARN = /^arn:aws[a-z-]*:kms:[^:]*:[^:]*:(alias\/.+)$/;

/** An error the SDK understands: `__type` selects the exception class. */
class KmsFault extends Error {
  constructor(
    readonly type: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

const validation = (message: string) => new KmsFault('ValidationException', message);
const invalidCiphertext = () => new KmsFault('InvalidCiphertextException', 'The ciphertext is invalid or does not match the encryption context.');

interface StoredKey {
  keyId: string;
  material: Buffer;
  /** epoch seconds */
  createdAt: number;
  description: string;
  enabled: boolean;
}

interface StoredAlias {
  name: string;
  keyId: string;
  createdAt: number;
}

interface KeysFile {
  format: typeof KEYS_FILE_FORMAT;
  keys: { keyId: string; material: string; createdAt: number; description: string; enabled: boolean }[];
  aliases: StoredAlias[];
}

/** Keys and aliases, optionally persisted to `<dataDir>/kms-keys.json`. */
class KeyStore {
  private readonly keys = new Map<string, StoredKey>();
  private readonly aliases = new Map<string, StoredAlias>();

  constructor(
    private readonly dataDir: string | undefined,
    readonly region: string,
    readonly accountId: string,
  ) {
    if (dataDir) this.load(dataDir);
  }

  keyArn(keyId: string): string {
    return `arn:aws:kms:${this.region}:${this.accountId}:key/${keyId}`;
  }

  aliasArn(name: string): string {
    return `arn:aws:kms:${this.region}:${this.accountId}:${name}`;
  }

  createKey(keyId: string = randomUUID(), description = ''): StoredKey {
    if (!KEY_ID.test(keyId)) throw validation('Invalid key id.');
    if (this.keys.has(keyId)) throw new KmsFault('AlreadyExistsException', `Key ${this.keyArn(keyId)} already exists.`);
    const key: StoredKey = { keyId, material: randomBytes(MASTER_KEY_BYTES), createdAt: Math.floor(Date.now() / 1000), description, enabled: true };
    this.keys.set(keyId, key);
    this.persist();
    return key;
  }

  createAlias(name: string, targetKeyId: string): void {
    if (!ALIAS_NAME.test(name) || name.startsWith('alias/aws/')) throw validation('Invalid alias name.');
    if (this.aliases.has(name)) throw new KmsFault('AlreadyExistsException', `An alias with the name ${this.aliasArn(name)} already exists.`);
    const target = this.resolve(targetKeyId, { allowAlias: false });
    this.aliases.set(name, { name, keyId: target.keyId, createdAt: Math.floor(Date.now() / 1000) });
    this.persist();
  }

  listAliases(keyId?: string): StoredAlias[] {
    const filter = keyId === undefined ? undefined : this.resolve(keyId, { allowAlias: false }).keyId;
    return [...this.aliases.values()].filter((a) => filter === undefined || a.keyId === filter).sort((a, b) => a.name.localeCompare(b.name));
  }

  /** key id, key ARN, alias name or alias ARN -> key; NotFoundException otherwise */
  resolve(ref: unknown, { allowAlias = true }: { allowAlias?: boolean } = {}): StoredKey {
    if (typeof ref !== 'string' || ref.length === 0 || ref.length > 2048) throw validation('KeyId is required.');
    const found = this.find(ref, allowAlias);
    if (!found) throw new KmsFault('NotFoundException', `Key '${ref}' does not exist${allowAlias ? '' : ' (an alias is not accepted here)'}.`);
    return found;
  }

  find(ref: string, allowAlias = true): StoredKey | undefined {
    const keyArn = KEY_ARN.exec(ref);
    const aliasArn = ALIAS_ARN.exec(ref);
    let keyId: string | undefined;
    if (keyArn) keyId = keyArn[1];
    else if (aliasArn || ref.startsWith('alias/')) {
      if (!allowAlias) return undefined;
      keyId = this.aliases.get(aliasArn ? (aliasArn[1] as string) : ref)?.keyId;
    } else keyId = ref;
    return keyId === undefined ? undefined : this.keys.get(keyId);
  }

  /** Ensures `ref` (key id, key ARN or alias) exists, creating the key (and alias); returns the key. */
  ensure(ref: string): StoredKey {
    const existing = this.find(ref);
    if (existing) return existing;
    const aliasName = ref.startsWith('alias/') ? ref : ALIAS_ARN.exec(ref)?.[1];
    if (aliasName) {
      if (!ALIAS_NAME.test(aliasName) || aliasName.startsWith('alias/aws/')) throw validation('Invalid alias name.');
      const key = this.createKey(undefined, `local key for ${aliasName}`);
      this.createAlias(aliasName, key.keyId);
      return key;
    }
    return this.createKey(KEY_ARN.exec(ref)?.[1] ?? ref, 'local key');
  }

  private load(dir: string): void {
    let text: string;
    try {
      text = readFileSync(join(dir, KEYS_FILE), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
      throw err;
    }
    const file = JSON.parse(text) as KeysFile;
    if (file?.format !== KEYS_FILE_FORMAT || !Array.isArray(file.keys) || !Array.isArray(file.aliases)) {
      throw new Error(`${join(dir, KEYS_FILE)} is not a ${KEYS_FILE_FORMAT} key file`);
    }
    for (const k of file.keys) {
      const material = decodeBase64Strict(k.material);
      if (!KEY_ID.test(k.keyId) || !material || material.length !== MASTER_KEY_BYTES) {
        throw new Error(`${join(dir, KEYS_FILE)} holds an invalid key entry`);
      }
      this.keys.set(k.keyId, { keyId: k.keyId, material, createdAt: k.createdAt, description: k.description ?? '', enabled: k.enabled !== false });
    }
    for (const a of file.aliases) {
      if (!ALIAS_NAME.test(a.name) || !this.keys.has(a.keyId)) throw new Error(`${join(dir, KEYS_FILE)} holds an invalid alias entry`);
      this.aliases.set(a.name, { name: a.name, keyId: a.keyId, createdAt: a.createdAt });
    }
  }

  private persist(): void {
    if (!this.dataDir) return;
    mkdirSync(this.dataDir, { recursive: true, mode: 0o700 });
    const file: KeysFile = {
      format: KEYS_FILE_FORMAT,
      keys: [...this.keys.values()].map((k) => ({
        keyId: k.keyId,
        material: k.material.toString('base64'),
        createdAt: k.createdAt,
        description: k.description,
        enabled: k.enabled,
      })),
      aliases: [...this.aliases.values()],
    };
    const path = join(this.dataDir, KEYS_FILE);
    const tmp = `${path}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
    writeFileSync(tmp, JSON.stringify(file, null, 2) + '\n', { mode: 0o600 });
    renameSync(tmp, path);
  }
}

// ---- ciphertext blobs --------------------------------------------------------------------------

function contextAad(header: Buffer, context: Record<string, string>): Buffer {
  return Buffer.concat([header, Buffer.from(canonicalContext(context), 'utf8')]);
}

function sealBlob(key: StoredKey, plaintext: Buffer, context: Record<string, string>): Buffer {
  const id = Buffer.from(key.keyId, 'ascii');
  const header = Buffer.concat([Buffer.from([KMS_BLOB_VERSION, id.length]), id]);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key.material, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(contextAad(header, context));
  const ct = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return Buffer.concat([header, iv, cipher.getAuthTag(), ct]);
}

interface ParsedBlob {
  keyId: string;
  header: Buffer;
  iv: Buffer;
  tag: Buffer;
  ct: Buffer;
}

function parseBlob(blob: Buffer): ParsedBlob {
  if (blob.length < 2 || blob[0] !== KMS_BLOB_VERSION) throw invalidCiphertext();
  const n = blob[1] as number;
  const ivAt = 2 + n;
  const tagAt = ivAt + IV_BYTES;
  const ctAt = tagAt + TAG_BYTES;
  if (n === 0 || blob.length <= ctAt) throw invalidCiphertext();
  const keyId = blob.subarray(2, ivAt).toString('ascii');
  if (!KEY_ID.test(keyId)) throw invalidCiphertext();
  return { keyId, header: blob.subarray(0, ivAt), iv: blob.subarray(ivAt, tagAt), tag: blob.subarray(tagAt, ctAt), ct: blob.subarray(ctAt) };
}

function openBlob(key: StoredKey, blob: ParsedBlob, context: Record<string, string>): Buffer {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key.material, blob.iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(contextAad(blob.header, context));
    decipher.setAuthTag(blob.tag);
    return Buffer.concat([decipher.update(blob.ct), decipher.final()]);
  } catch {
    throw invalidCiphertext();
  }
}

// ---- request field readers ---------------------------------------------------------------------

type Json = Record<string, unknown>;

function readContext(body: Json): Record<string, string> {
  const ctx = body.EncryptionContext;
  if (ctx === undefined || ctx === null) return {};
  if (typeof ctx !== 'object' || Array.isArray(ctx)) throw validation('EncryptionContext must be a map of strings.');
  for (const [k, v] of Object.entries(ctx)) {
    if (k.length === 0 || typeof v !== 'string') throw validation('EncryptionContext must be a map of non-empty keys to strings.');
  }
  return ctx as Record<string, string>;
}

function readBlob(body: Json, field: string, max: number): Buffer {
  const value = body[field];
  if (value === undefined || value === null) throw validation(`${field} is required.`);
  const bytes = decodeBase64Strict(value);
  if (!bytes) throw new KmsFault('SerializationException', `${field} is not valid base64.`);
  if (bytes.length < 1 || bytes.length > max) throw validation(`${field} must be between 1 and ${max} bytes.`);
  return bytes;
}

function checkAlgorithm(body: Json): void {
  const alg = body.EncryptionAlgorithm;
  if (alg !== undefined && alg !== 'SYMMETRIC_DEFAULT') throw new KmsFault('InvalidKeyUsageException', 'Only SYMMETRIC_DEFAULT is supported.');
}

function checkDryRun(body: Json): void {
  if (body.DryRun === true) throw new KmsFault('DryRunOperationException', 'The request would have succeeded, but the DryRun option is set.', 412);
}

function usableKey(store: KeyStore, ref: unknown): StoredKey {
  const key = store.resolve(ref);
  if (!key.enabled) throw new KmsFault('DisabledException', `${store.keyArn(key.keyId)} is disabled.`);
  return key;
}

function keyMetadata(store: KeyStore, key: StoredKey): Json {
  return {
    AWSAccountId: store.accountId,
    KeyId: key.keyId,
    Arn: store.keyArn(key.keyId),
    CreationDate: key.createdAt,
    Enabled: key.enabled,
    Description: key.description,
    KeyUsage: 'ENCRYPT_DECRYPT',
    KeyState: key.enabled ? 'Enabled' : 'Disabled',
    Origin: 'AWS_KMS',
    KeyManager: 'CUSTOMER',
    CustomerMasterKeySpec: 'SYMMETRIC_DEFAULT',
    KeySpec: 'SYMMETRIC_DEFAULT',
    EncryptionAlgorithms: ['SYMMETRIC_DEFAULT'],
    MultiRegion: false,
  };
}

function dataKeyLength(body: Json): number {
  const { KeySpec, NumberOfBytes } = body;
  if (KeySpec !== undefined && NumberOfBytes !== undefined) throw validation('Specify either KeySpec or NumberOfBytes, not both.');
  if (KeySpec === 'AES_256') return 32;
  if (KeySpec === 'AES_128') return 16;
  if (KeySpec !== undefined) throw validation('KeySpec must be AES_256 or AES_128.');
  if (typeof NumberOfBytes === 'number' && Number.isInteger(NumberOfBytes) && NumberOfBytes >= 1 && NumberOfBytes <= 1024) return NumberOfBytes;
  throw validation('Specify KeySpec or NumberOfBytes (1 to 1024).');
}

// ---- operations --------------------------------------------------------------------------------

type Operation = (store: KeyStore, body: Json) => Json;

function generateDataKey(withPlaintext: boolean): Operation {
  return (store, body) => {
    if (body.Recipient !== undefined) throw validation('Recipient is not supported.');
    const key = usableKey(store, body.KeyId);
    const length = dataKeyLength(body);
    const context = readContext(body);
    checkDryRun(body);
    const dataKey = randomBytes(length);
    const out: Json = { KeyId: store.keyArn(key.keyId), CiphertextBlob: sealBlob(key, dataKey, context).toString('base64') };
    if (withPlaintext) out.Plaintext = dataKey.toString('base64');
    dataKey.fill(0);
    return out;
  };
}

const operations: Record<string, Operation> = {
  GenerateDataKey: generateDataKey(true),
  GenerateDataKeyWithoutPlaintext: generateDataKey(false),

  Encrypt(store, body) {
    const key = usableKey(store, body.KeyId);
    const plaintext = readBlob(body, 'Plaintext', MAX_ENCRYPT_PLAINTEXT);
    const context = readContext(body);
    checkAlgorithm(body);
    checkDryRun(body);
    return { KeyId: store.keyArn(key.keyId), CiphertextBlob: sealBlob(key, plaintext, context).toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
  },

  Decrypt(store, body) {
    if (body.Recipient !== undefined) throw validation('Recipient is not supported.');
    const blob = parseBlob(readBlob(body, 'CiphertextBlob', MAX_CIPHERTEXT_BLOB));
    const context = readContext(body);
    checkAlgorithm(body);
    const key = store.find(blob.keyId);
    if (!key) throw new KmsFault('NotFoundException', `Key ${store.keyArn(blob.keyId)} does not exist.`);
    if (body.KeyId !== undefined && usableKey(store, body.KeyId).keyId !== key.keyId) {
      throw new KmsFault('IncorrectKeyException', 'The key ID in the request does not identify a KMS key that can perform this operation.');
    }
    if (!key.enabled) throw new KmsFault('DisabledException', `${store.keyArn(key.keyId)} is disabled.`);
    const plaintext = openBlob(key, blob, context);
    checkDryRun(body);
    const out = { KeyId: store.keyArn(key.keyId), Plaintext: plaintext.toString('base64'), EncryptionAlgorithm: 'SYMMETRIC_DEFAULT' };
    plaintext.fill(0);
    return out;
  },

  DescribeKey(store, body) {
    return { KeyMetadata: keyMetadata(store, store.resolve(body.KeyId)) };
  },

  CreateKey(store, body) {
    const usage = body.KeyUsage ?? 'ENCRYPT_DECRYPT';
    const spec = body.KeySpec ?? body.CustomerMasterKeySpec ?? 'SYMMETRIC_DEFAULT';
    if (usage !== 'ENCRYPT_DECRYPT' || spec !== 'SYMMETRIC_DEFAULT' || (body.Origin ?? 'AWS_KMS') !== 'AWS_KMS' || body.MultiRegion === true) {
      throw new KmsFault('UnsupportedOperationException', 'This local KMS supports symmetric ENCRYPT_DECRYPT AWS_KMS keys only.');
    }
    if (body.Description !== undefined && (typeof body.Description !== 'string' || body.Description.length > 8192)) throw validation('Invalid Description.');
    checkDryRun(body);
    return { KeyMetadata: keyMetadata(store, store.createKey(undefined, (body.Description as string | undefined) ?? '')) };
  },

  CreateAlias(store, body) {
    if (typeof body.AliasName !== 'string') throw validation('AliasName is required.');
    store.createAlias(body.AliasName, body.TargetKeyId as string);
    return {};
  },

  ListAliases(store, body) {
    const aliases = store.listAliases(body.KeyId === undefined ? undefined : (body.KeyId as string));
    return {
      Aliases: aliases.map((a) => ({
        AliasName: a.name,
        AliasArn: store.aliasArn(a.name),
        TargetKeyId: a.keyId,
        CreationDate: a.createdAt,
        LastUpdatedDate: a.createdAt,
      })),
      Truncated: false,
    };
  },
};

// ---- HTTP --------------------------------------------------------------------------------------

function send(res: ServerResponse, status: number, body: Json, close = false): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': CONTENT_TYPE,
    'content-length': Buffer.byteLength(text),
    'x-amzn-requestid': randomUUID(),
    ...(close ? { connection: 'close' } : {}),
  });
  res.end(text);
}

function sendFault(res: ServerResponse, fault: KmsFault, close = false): void {
  send(res, fault.status, { __type: fault.type, message: fault.message }, close);
}

function handle(store: KeyStore, req: IncomingMessage, res: ServerResponse): void {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk: Buffer) => {
    if (tooLarge) return;
    size += chunk.length;
    if (size > MAX_REQUEST_BYTES) {
      tooLarge = true;
      chunks.length = 0;
      sendFault(res, new KmsFault('ValidationException', 'Request body too large.', 413), true);
      req.resume();
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', () => {
    if (!res.headersSent) sendFault(res, new KmsFault('SerializationException', 'Request body could not be read.'), true);
  });
  req.on('end', () => {
    if (tooLarge) return;
    try {
      if (req.method !== 'POST') throw new KmsFault('UnknownOperationException', 'Only POST is supported.', 405);
      if (!req.headers.authorization) throw new KmsFault('MissingAuthenticationTokenException', 'Request is missing Authentication Token');
      const target = req.headers['x-amz-target'];
      const op = typeof target === 'string' && target.startsWith('TrentService.') ? target.slice('TrentService.'.length) : undefined;
      const operation = op !== undefined && Object.prototype.hasOwnProperty.call(operations, op) ? operations[op] : undefined;
      if (!operation) throw new KmsFault('UnknownOperationException', 'Unknown operation.');
      const contentType = req.headers['content-type'] ?? '';
      if (!contentType.toLowerCase().startsWith(CONTENT_TYPE)) throw new KmsFault('SerializationException', `Content-Type must be ${CONTENT_TYPE}.`);
      let body: unknown;
      try {
        const text = Buffer.concat(chunks).toString('utf8');
        body = text.length === 0 ? {} : JSON.parse(text);
      } catch {
        throw new KmsFault('SerializationException', 'Request body is not valid JSON.');
      }
      if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new KmsFault('SerializationException', 'Request body must be a JSON object.');
      send(res, 200, operation(store, body as Json));
    } catch (err) {
      sendFault(res, err instanceof KmsFault ? err : new KmsFault('KMSInternalException', 'Internal error.', 500));
    }
  });
}

/** Starts the local KMS on 127.0.0.1. Pre-creates `options.keys` (persisted when `dataDir` is set). */
export async function startKmsServer(options: KmsServerOptions): Promise<KmsServer> {
  const host = options.host ?? KMS_SERVER_HOST;
  if (host !== KMS_SERVER_HOST) throw new Error(`local KMS listens on ${KMS_SERVER_HOST} only`);
  if (!Number.isInteger(options.port) || options.port < 0 || options.port > 65535) throw new Error('port must be an integer 0..65535');

  const store = new KeyStore(options.dataDir, options.region ?? 'us-east-1', options.accountId ?? '000000000000');
  const keyArns = (options.keys ?? []).map((ref) => {
    try {
      return store.keyArn(store.ensure(ref).keyId);
    } catch (err) {
      throw new Error(`cannot create local KMS key ${ref}: ${err instanceof Error ? err.message : 'unknown error'}`, { cause: err });
    }
  });

  const server = createServer((req, res) => handle(store, req, res));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ host, port: options.port }, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    url: `http://${host}:${port}`,
    port,
    keyArns,
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        server.closeAllConnections();
      });
      return closing;
    },
  };
}
