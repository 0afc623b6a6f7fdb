/**
 * Keyed hashes for the two lookups that would otherwise put PHI in a key:
 *   - the patient match index: HMAC(normalised last name, date of birth)
 *   - known links: HMAC(sourceSystemId, externalPatientId)
 * A plain SHA-256 of a last name and a birth date can be reversed by trying every name and date
 * (about 10^9 guesses), so the hash is keyed with a 256-bit secret.
 *
 * The secret lives in the forms table, wrapped by KMS (an envelope under the service's key,
 * purpose match-index-key): item pk CONFIG#match-index-key, sk v1. It is created on first use by a
 * writer of the index (indexPatientForMatching: needs KMS GenerateDataKey), read by the matcher
 * (KMS Decrypt), and cached in memory per container. Creation is a conditional put: concurrent
 * creators converge on the first one's key.
 */
import { createHmac, randomBytes } from 'node:crypto';
import type { EnvelopeEncryptor } from '../crypto/envelope';
import { serializeEnvelope } from '../crypto/envelope-format';
import { nameTokens, normaliseIdentifier, normaliseName, phoneticCodes } from './normalize';

export const MATCH_KEY_VERSION = 'v1';
export const MATCH_KEY_PURPOSE = 'match-index-key';
const KEY_CONTEXT = { recordType: MATCH_KEY_PURPOSE, version: MATCH_KEY_VERSION };

/** Per container: table name -> key. */
const cache = new Map<string, Buffer>();

export function clearMatchKeyCache(): void {
  for (const key of cache.values()) key.fill(0);
  cache.clear();
}

/**
 * Where the wrapped key is kept (the forms table): PacketReader reads it, PacketIntakeWriter and
 * FormsStore can also create it. A store without `putMatchKeyEnvelope` (the chart searches' wiring,
 * match-key-wiring.ts) serves `key({ create: false })` only.
 */
export interface MatchKeyEnvelopes {
  getMatchKeyEnvelope(version: string): Promise<string | undefined>;
  putMatchKeyEnvelope?(version: string, envelope: string, at: string): Promise<boolean>;
}

export class MatchKeys {
  constructor(
    private readonly store: MatchKeyEnvelopes,
    private readonly encryptor: EnvelopeEncryptor,
    private readonly cacheId: string,
  ) {}

  /** The HMAC key; undefined when none exists yet and `create` is false. */
  async key(options: { create: boolean; now?: Date }): Promise<Buffer | undefined> {
    const cached = cache.get(this.cacheId);
    if (cached) return cached;
    let envelope = await this.store.getMatchKeyEnvelope(MATCH_KEY_VERSION);
    if (!envelope) {
      if (!options.create) return undefined;
      if (!this.store.putMatchKeyEnvelope) throw new Error('this match key wiring reads the key only; it cannot create one');
      const secret = randomBytes(32);
      const sealed = serializeEnvelope(await this.encryptor.encrypt(secret, KEY_CONTEXT, { purpose: MATCH_KEY_PURPOSE }));
      secret.fill(0);
      await this.store.putMatchKeyEnvelope(MATCH_KEY_VERSION, sealed, (options.now ?? new Date()).toISOString());
      envelope = await this.store.getMatchKeyEnvelope(MATCH_KEY_VERSION);
      if (!envelope) throw new Error('match index key vanished after creation');
    }
    const key = await this.encryptor.decrypt(envelope, KEY_CONTEXT);
    cache.set(this.cacheId, key);
    return key;
  }
}

function hmac(key: Buffer, parts: string[]): string {
  return createHmac('sha256', key).update(JSON.stringify(parts), 'utf8').digest('hex');
}

/** Index key of a (last name, date of birth) pair; undefined when either is empty after normalising. */
export function matchIndexKey(key: Buffer, lastName: string | undefined, dob: string | undefined): string | undefined {
  const last = normaliseName(lastName);
  if (!last || !dob) return undefined;
  return hmac(key, ['match-index', last, dob]);
}

/**
 * Every blocking key of a person (chart patient or packet), all HMAC-keyed, all including the
 * date of birth (no key holds a name or a birth date in clear):
 *   - last name + dob                 ['match-index', last, dob]   (the v1 key, unchanged)
 *   - each token of a double-barrelled last name + dob  (same shape: "Smith-Jones" meets "Smith")
 *   - first name (first token) + dob  ['match-index:first', first, dob]   (a typo in the last name)
 *   - each Double Metaphone code of the last name + dob  ['match-index:last-sound', code, dob]
 * A packet looks up its keys and, for swapped names, the keys of its names the other way round.
 */
export function blockingKeys(key: Buffer, givenName: string | undefined, lastName: string | undefined, dob: string | undefined): string[] {
  if (!dob) return [];
  const keys: string[] = [];
  const last = normaliseName(lastName);
  if (last) {
    keys.push(hmac(key, ['match-index', last, dob]));
    const tokens = nameTokens(lastName).filter((t) => t.length >= 2);
    if (tokens.length > 1) for (const token of tokens) keys.push(hmac(key, ['match-index', token, dob]));
    for (const code of phoneticCodes(lastName)) keys.push(hmac(key, ['match-index:last-sound', code, dob]));
  }
  const first = nameTokens(givenName)[0];
  if (first) keys.push(hmac(key, ['match-index:first', first, dob]));
  return [...new Set(keys)];
}

/**
 * Index key of a chart MRN (white space removed, upper case: lib/chart/identifiers.ts), whatever its assigning authority: staff searching
 * the chart from the inbox type the MRN they see. Undefined for an empty MRN.
 */
export function mrnIndexKey(key: Buffer, mrn: string | undefined): string | undefined {
  const value = normaliseIdentifier(mrn);
  return value ? hmac(key, ['match-index:mrn', value]) : undefined;
}

/** The keys a packet looks up: its own blocking keys and those of its names swapped. */
export function packetBlockingKeys(key: Buffer, firstName: string, lastName: string, dob: string | undefined): string[] {
  return [...new Set([...blockingKeys(key, firstName, lastName, dob), ...blockingKeys(key, lastName, firstName, dob)])];
}

/** Link key of a (partner, sourceSystemId, externalPatientId): one partner's links are never another's. */
export function linkKeyOf(key: Buffer, partnerId: string, sourceSystemId: string, externalPatientId: string | undefined): string | undefined {
  const external = externalPatientId?.trim();
  if (!external) return undefined;
  return hmac(key, ['link', partnerId, sourceSystemId, external]);
}

/** Keyed fingerprint of a submission's canonical content (a changed resubmission is told apart without storing PHI). */
export function contentFingerprintOf(key: Buffer, canonicalContent: string): string {
  return hmac(key, ['form-content', canonicalContent]);
}
