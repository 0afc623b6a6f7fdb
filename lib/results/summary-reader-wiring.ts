/**
 * Wiring for readers of decrypted result summaries (the patient summary export): DynamoDB and KMS
 * Decrypt only; no S3 client, no SQS client, nothing of the intake path in the bundle.
 */
import { Env } from '../config/service';
import { dynamoDbClient, kmsClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { optionalEnv } from '../aws/environment';
import { tableName } from '../dynamo/table-names';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { LAB_RESULT_KEY_PURPOSE, LabResultSummaryReader } from './result-summary-reader';

const cache = new ContainerCache<LabResultSummaryReader>();

export function labResultSummaryReader(): LabResultSummaryReader {
  return cache.get([dynamoDbClient(), kmsClient()], ([db, kms]) => {
    const keyId = optionalEnv(Env.kmsKeyId, 'unset');
    const table = tableName('results');
    const encryptor = new EnvelopeEncryptor({ kms, keyId, purpose: LAB_RESULT_KEY_PURPOSE });
    return new LabResultSummaryReader({ db, table, encryptor, lookupKeys: { db, table, kms, kmsKeyId: keyId === 'unset' ? undefined : keyId } });
  });
}
