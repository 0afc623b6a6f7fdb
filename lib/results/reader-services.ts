/**
 * Wiring for readers of decrypted result summaries (the patient summary export): DynamoDB and KMS
 * Decrypt only; no S3 client, no SQS client, nothing of the intake path in the bundle.
 */
import { Env } from '../config/service';
import { dynamoDbClient, kmsClient } from '../aws/clients';
import { optionalEnv } from '../aws/environment';
import { tableName } from '../dynamo/table-names';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { LAB_RESULT_KEY_PURPOSE, LabResultStore } from './result-store';

let cached: { db: unknown; kms: unknown; store: LabResultStore } | undefined;

export function labResultSummaryReader(): LabResultStore {
  const db = dynamoDbClient();
  const kms = kmsClient();
  if (!cached || cached.db !== db || cached.kms !== kms) {
    const keyId = optionalEnv(Env.kmsKeyId, 'unset');
    const table = tableName('results');
    const encryptor = new EnvelopeEncryptor({ kms, keyId, purpose: LAB_RESULT_KEY_PURPOSE });
    cached = { db, kms, store: new LabResultStore({ db, table, encryptor, lookupKeys: { db, table, kms, kmsKeyId: keyId === 'unset' ? undefined : keyId } }) };
  }
  return cached.store;
}
