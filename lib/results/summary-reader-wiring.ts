/**
 * Wiring for readers of decrypted result summaries (the patient summary export): DynamoDB and KMS
 * Decrypt only; no S3 client, no SQS client, nothing of the intake path in the bundle.
 */
import { dynamoDbClient, kmsClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { tableName } from '../dynamo/table-names';
import { EnvelopeDecryptor } from '../crypto/envelope-decryptor';
import { LabResultSummaryReader } from './result-summary-reader';

const cache = new ContainerCache<LabResultSummaryReader>();

export function labResultSummaryReader(): LabResultSummaryReader {
  return cache.get([dynamoDbClient(), kmsClient()], ([db, kms]) => {
    const table = tableName('results');
    // reads only: Decrypt pins the key each data key names (no key id needed), the lookup key is never created
    return new LabResultSummaryReader({ db, table, decryptor: new EnvelopeDecryptor({ kms }), lookupKeys: { db, table, kms } });
  });
}
