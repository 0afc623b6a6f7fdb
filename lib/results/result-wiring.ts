/**
 * Wiring from the environment (cloud or local stack): clients from lib/aws, names from
 * lib/config. Built once per container and rebuilt only when the SDK clients were replaced
 * (resetClients in tests), so the data key cache lives across invocations.
 *
 * This module wires every client (DynamoDB, KMS, S3, SQS). The notification retry, which needs
 * DynamoDB and SQS only, is wired apart in retry-wiring.ts.
 */
import { Env } from '../config/service';
import { dynamoDbClient, kmsClient, s3Client } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { optionalEnv, requireEnv } from '../aws/environment';
import { tableName } from '../dynamo/table-names';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { ChartItemReader } from '../chart/chart-reader';
import { ResultDocumentReader, ResultDocumentStore, ResultDocumentWriter } from './documents';
import { IdempotencyStore } from './idempotency';
import { loadResultKeys, type LookupKeySource } from './lookup-keys';
import { resultNotifier } from './notifier-wiring';
import { LAB_RESULT_KEY_PURPOSE } from './result-records';
import { LabResultStore } from './result-store';
import { LabResultVersionReader } from './result-version-reader';
import { LabResultWriter } from './result-writer';
import type { ReceiveDependencies } from './receive';

/**
 * Data key reuse bounds for lab results (the EnvelopeEncryptor cache): one KMS GenerateDataKey
 * protects at most this many encryptions (a result version costs 2, plus 1 per part in S3), and
 * for at most this long, whichever comes first.
 */
export const LAB_RESULT_DATA_KEY_MAX_USES = 1000;
export const LAB_RESULT_DATA_KEY_MAX_AGE_MS = 5 * 60 * 1000;

const encryptors = new ContainerCache<EnvelopeEncryptor>();

/** The lab result encryptor (purpose lab-result), one per KMS client. */
export function labResultEncryptor(): EnvelopeEncryptor {
  return encryptors.get(
    [kmsClient(), optionalEnv(Env.kmsKeyId, '')],
    ([kms, keyId]) =>
      new EnvelopeEncryptor({
        kms,
        keyId: keyId || 'unset',
        purpose: LAB_RESULT_KEY_PURPOSE,
        cache: { maxUses: LAB_RESULT_DATA_KEY_MAX_USES, maxAgeMs: LAB_RESULT_DATA_KEY_MAX_AGE_MS },
      }),
  );
}

function lookupKeySource(): LookupKeySource {
  return { db: dynamoDbClient(), table: tableName('results'), kms: kmsClient(), kmsKeyId: process.env[Env.kmsKeyId] || undefined };
}

const stores = new ContainerCache<LabResultStore>();
const readers = new ContainerCache<LabResultStore>();
const writers = new ContainerCache<LabResultWriter>();

/**
 * The result store for readers and writers. Readers without S3 access (the summary export) may
 * pass { documents: false }; reading a version with parts in S3 then fails, summaries do not.
 * { documents: false } avoids S3 calls, not the S3 client: this module imports it (and KMS), so
 * every bundle that imports labResultStore carries both. A function whose `needs` lack them needs
 * its own wiring module, as the notification retry has (retry-wiring.ts).
 */
export function labResultStore(options: { documents?: boolean } = {}): LabResultStore {
  const withDocuments = options.documents !== false;
  const db = dynamoDbClient();
  const encryptor = labResultEncryptor();
  const s3 = withDocuments ? s3Client() : undefined;
  const table = tableName('results');
  const bucket = withDocuments ? requireEnv(Env.documentsBucket) : '';
  return (withDocuments ? stores : readers).get(
    [db, encryptor, s3, table, bucket],
    () =>
      new LabResultStore({
        db,
        table,
        encryptor,
        documents: s3 ? new ResultDocumentStore(s3, bucket) : undefined,
        lookupKeys: lookupKeySource(),
      }),
  );
}

/**
 * The result writer (the writes and the notification bookkeeping, no reads of versions): what
 * POST /receiveTestData, HL7 ORU and FHIR DiagnosticReport intake bundle. Same clients, table,
 * bucket and encryptor as labResultStore().
 */
export function labResultWriter(): LabResultWriter {
  const db = dynamoDbClient();
  const encryptor = labResultEncryptor();
  const s3 = s3Client();
  const table = tableName('results');
  const bucket = requireEnv(Env.documentsBucket);
  return writers.get([db, encryptor, s3, table, bucket], () => new LabResultWriter({ db, table, encryptor, documents: new ResultDocumentWriter(s3, bucket) }));
}

export { resultNotifier } from './notifier-wiring';

/** Everything POST /receiveTestData needs. */
export function receiveDependencies(): ReceiveDependencies {
  return { ...labResultWriterDependencies(), idempotency: new IdempotencyStore(dynamoDbClient(), tableName('idempotency')) };
}

/** The result writer without the idempotency table (the receiving services of the intake paths). */
export function labResultWriterDependencies(): Omit<ReceiveDependencies, 'idempotency'> {
  return { ...labResultServices(), store: labResultWriter() };
}

/**
 * The result writer and the reads of whole versions (LabResultVersionReader), without the idempotency
 * table: for routing held results (it reads a held result's current version, then stores it again
 * for the chart patient; it never passes a partner's x-request-id).
 */
export function heldLabResultDependencies(): Omit<ReceiveDependencies, 'idempotency'> & { versions: LabResultVersionReader } {
  return { ...labResultWriterDependencies(), versions: labResultVersionReader() };
}

const versionReaders = new ContainerCache<LabResultVersionReader>();

/** The reads of whole versions with the lab result encryptor's decryption (its data key cache) and the documents bucket. */
function labResultVersionReader(): LabResultVersionReader {
  const db = dynamoDbClient();
  const encryptor = labResultEncryptor();
  const s3 = s3Client();
  const table = tableName('results');
  const bucket = requireEnv(Env.documentsBucket);
  return versionReaders.get(
    [db, encryptor, s3, table, bucket],
    () => new LabResultVersionReader({ db, table, decryptor: encryptor, documents: new ResultDocumentReader(s3, bucket), lookupKeys: lookupKeySource() }),
  );
}

/** What every writer of results shares beside its store: the lookup keys, the chart's patients, the notifier. */
function labResultServices(): Omit<ReceiveDependencies, 'idempotency' | 'store'> {
  const chart = new ChartItemReader(dynamoDbClient(), tableName('chart'));
  return {
    keys: async () => (await loadResultKeys(lookupKeySource(), { create: true }))!,
    patientExists: async (patientId) => (await chart.getPatient(patientId)) !== undefined,
    notifier: resultNotifier(),
  };
}
