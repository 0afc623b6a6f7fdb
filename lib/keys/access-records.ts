/**
 * The key and partner records the authorizer decides on, kept in the Lambda container for at most
 * MAX_ACCESS_RECORD_AGE_SECONDS (10 s), so a steady stream of requests pays no DynamoDB read for
 * them. The bound is what revocation, blocking, rotation and every other key or partner change
 * wait for: a change committed at T is seen by every request authorized at T + the bound or later
 * (each record is reloaded with a consistent GetItem once its age reaches the bound; its age
 * counts from the request that started the load). Unknown keys are kept as well (as "none", so
 * a stream of wrong keys costs no reads either); a new key works within the bound of its
 * activation. An expiring key (rotation overlap) is refused from its expiresAt on regardless,
 * because expiresAt is compared with each request's own clock.
 */
import { BoundedAgeCache } from '../aws/container-cache';
import { MissingConfigurationError } from '../aws/environment';
import { normaliseAuthority } from '../chart/identifiers';
import type { ApiKeyRecord, PartnerRecord } from './api-key';
import type { ApiKeyStore } from './api-key-store';

/** Longest a container answers from a key or partner record it read (the documented bound). */
export const MAX_ACCESS_RECORD_AGE_SECONDS = 10;
/** Keys (and partners) one container keeps; beyond it the oldest loaded is dropped. */
export const MAX_CACHED_ACCESS_RECORDS = 5000;

/**
 * Environment variable: how long (seconds, 0..10, default 10) the authorizer's container answers
 * from a key or partner record it read (lib/keys/access-records.ts). 0 reads both on every request
 * (the test suites set it, so their "revoked on the next request" checks keep their meaning).
 */
export const ACCESS_RECORD_MAX_AGE_ENV = 'ACCESS_RECORD_MAX_AGE_SECONDS';

/** ACCESS_RECORD_MAX_AGE_SECONDS: an integer 0..10; unset means 10. */
export function accessRecordMaxAgeSeconds(): number {
  const raw = process.env[ACCESS_RECORD_MAX_AGE_ENV];
  if (raw === undefined || raw === '') return MAX_ACCESS_RECORD_AGE_SECONDS;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 0 || value > MAX_ACCESS_RECORD_AGE_SECONDS)
    throw new MissingConfigurationError(`${ACCESS_RECORD_MAX_AGE_ENV} (integer 0..${MAX_ACCESS_RECORD_AGE_SECONDS})`);
  return value;
}

/** What the access rule reads: a key by hash and a partner by id, as of a request's clock. */
export interface AccessRecords {
  getKey(keyHash: string, now: Date): Promise<ApiKeyRecord | undefined>;
  getPartner(partnerId: string, now: Date): Promise<PartnerRecord | undefined>;
}

export class CachedAccessRecords implements AccessRecords {
  private readonly keys: BoundedAgeCache<ApiKeyRecord | undefined>;
  private readonly partners: BoundedAgeCache<PartnerRecord | undefined>;

  /** maxAgeSeconds is clamped to 0..MAX_ACCESS_RECORD_AGE_SECONDS (0: read every time). */
  constructor(
    private readonly store: Pick<ApiKeyStore, 'getKey' | 'getPartner'>,
    maxAgeSeconds: number,
  ) {
    const maxAgeMs = Math.max(0, Math.min(MAX_ACCESS_RECORD_AGE_SECONDS, maxAgeSeconds)) * 1000;
    this.keys = new BoundedAgeCache(maxAgeMs, MAX_CACHED_ACCESS_RECORDS);
    this.partners = new BoundedAgeCache(maxAgeMs, MAX_CACHED_ACCESS_RECORDS);
  }

  get maxAgeMs(): number {
    return this.keys.maxAgeMs;
  }

  getKey(keyHash: string, now: Date): Promise<ApiKeyRecord | undefined> {
    return this.keys.get(keyHash, now.getTime(), () => this.store.getKey(keyHash));
  }

  getPartner(partnerId: string, now: Date): Promise<PartnerRecord | undefined> {
    return this.partners.get(partnerId, now.getTime(), () => this.store.getPartner(partnerId));
  }
}

/**
 * Who owns an assigning authority (HL7 CX-4 / a FHIR identifier system), as HL7 and FHIR intake ask
 * for every identifier that is not the chart's, kept in the container under the same bound as the
 * key and partner records: an authority claimed or released at T is seen by every message received
 * at T + the bound or later. Without it each such identifier cost one GetItem per message.
 */
export class CachedAuthorityOwners {
  private readonly owners: BoundedAgeCache<string | undefined>;

  /** maxAgeSeconds is clamped to 0..MAX_ACCESS_RECORD_AGE_SECONDS (0: read every time). */
  constructor(
    private readonly store: Pick<ApiKeyStore, 'authorityOwner'>,
    maxAgeSeconds: number,
  ) {
    this.owners = new BoundedAgeCache(Math.max(0, Math.min(MAX_ACCESS_RECORD_AGE_SECONDS, maxAgeSeconds)) * 1000, MAX_CACHED_ACCESS_RECORDS);
  }

  ownerOf(authority: string, now: Date): Promise<string | undefined> {
    const name = normaliseAuthority(authority);
    return this.owners.get(name, now.getTime(), () => this.store.authorityOwner(name));
  }
}
