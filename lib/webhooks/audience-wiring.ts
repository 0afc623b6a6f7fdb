/**
 * The audience rule's reads, wired from the environment (audience.ts): the subscriber's standing
 * from the keys table (its partner item, and the scopes of its usable keys), the relationship from
 * the chart table, and a result version's audience facts and chart patient from the results table
 * (a decrypting read: KMS Decrypt, S3 for parts kept there).
 *
 * Standing is read once per worker invocation (one SQS batch): `audienceSource()` is called per
 * batch, so a partner blocked or a key revoked is seen by the next batch. The keys are found by a
 * scan of the keys table (small: partners and their keys; it has no index by partner), once per
 * batch and only when a batch holds an event.
 */
import { dynamoDbClient, kmsClient, s3Client } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { requireEnv } from '../aws/environment';
import { Env } from '../config/service';
import type { Scope } from '../config/scopes';
import { EnvelopeDecryptor } from '../crypto/envelope-decryptor';
import { tableName } from '../dynamo/table-names';
import { keyIsUsable, partnerPatientAccess, type ApiKeyRecord } from '../keys/api-key';
import { ApiKeyStore } from '../keys/api-key-store';
import { relationshipLookup } from '../relationships/relationship-wiring';
import { ResultDocumentReader } from '../results/documents';
import { LabResultVersionReader } from '../results/result-version-reader';
import { once, type AudienceSource, type SubscriberStanding, type VersionAudience } from './audience';

const readers = new ContainerCache<LabResultVersionReader>();

function versionReader(): LabResultVersionReader {
  const inputs = [dynamoDbClient(), kmsClient(), s3Client(), tableName('results'), requireEnv(Env.documentsBucket)] as const;
  return readers.get(
    inputs,
    ([db, kms, s3, table, bucket]) =>
      new LabResultVersionReader({
        db,
        table,
        decryptor: new EnvelopeDecryptor({ kms }),
        documents: new ResultDocumentReader(s3, bucket),
        lookupKeys: { db, table, kms },
      }),
  );
}

/** A version's audience facts and, when filed, its chart patient (the patient id the chart matched). */
export async function readVersionAudience(
  reader: Pick<LabResultVersionReader, 'readVersion'>,
  resultId: string,
  versionId: string,
): Promise<VersionAudience | undefined> {
  const version = await reader.readVersion(resultId, versionId);
  if (!version) return undefined;
  return {
    facts: { partnerId: version.partnerId, filed: version.patientMatched },
    ...(version.patientMatched ? { chartPatientId: version.filedPatientId } : {}),
  };
}

/** The standing of each partner from one read of the keys table's partner item and one scan of its keys. */
export function standingReader(
  keys: Pick<ApiKeyStore, 'getPartner' | 'listKeys'>,
  now: () => Date,
): (partnerId: string) => Promise<SubscriberStanding | undefined> {
  const allKeys = once(() => keys.listKeys());
  const cache = new Map<string, Promise<SubscriberStanding | undefined>>();
  const read = async (partnerId: string): Promise<SubscriberStanding | undefined> => {
    const partner = await keys.getPartner(partnerId);
    if (!partner) return undefined;
    const at = now();
    const scopes = new Set<Scope>((await allKeys()).filter((k: ApiKeyRecord) => k.partnerId === partnerId && keyIsUsable(k, at)).flatMap((k) => k.scopes));
    return { policy: partner.policy, patientAccess: partnerPatientAccess(partner), scopes };
  };
  return (partnerId) => {
    let standing = cache.get(partnerId);
    if (!standing) cache.set(partnerId, (standing = read(partnerId)));
    return standing;
  };
}

/** The audience rule's reads for one worker invocation (a batch): standing memoised for the batch only. */
export function audienceSource(): AudienceSource {
  const now = () => new Date();
  return {
    standing: standingReader(new ApiKeyStore(dynamoDbClient(), tableName('keys')), now),
    relationshipLookup,
    readVersion: (resultId, versionId) => readVersionAudience(versionReader(), resultId, versionId),
    now,
  };
}
