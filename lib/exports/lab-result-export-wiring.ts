/**
 * Wiring of the lab result export: the result store with its S3 documents (reports kept outside
 * the item) and KMS Decrypt, and the chart store. No SQS client (the export publishes nothing).
 */
import { dynamoDbClient, kmsClient, s3Client } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { optionalEnv, requireEnv } from '../aws/environment';
import { ChartRecordReader } from '../chart/chart-reader';
import { Env } from '../config/service';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { tableName } from '../dynamo/table-names';
import { ResultDocumentStore } from '../results/documents';
import { LAB_RESULT_KEY_PURPOSE, LabResultStore } from '../results/result-store';
import type { LabResultExportDependencies } from './lab-result-export';

const cache = new ContainerCache<LabResultExportDependencies>();

export function labResultExportDependencies(): LabResultExportDependencies {
  const inputs = [dynamoDbClient(), kmsClient(), s3Client(), tableName('results'), tableName('chart'), requireEnv(Env.documentsBucket)] as const;
  return cache.get(inputs, ([db, kms, s3, table, chartTable, bucket]) => {
    const keyId = optionalEnv(Env.kmsKeyId, 'unset');
    const store = new LabResultStore({
      db,
      table,
      encryptor: new EnvelopeEncryptor({ kms, keyId, purpose: LAB_RESULT_KEY_PURPOSE }),
      documents: new ResultDocumentStore(s3, bucket),
      lookupKeys: { db, table, kms, kmsKeyId: keyId === 'unset' ? undefined : keyId },
    });
    return { results: store, chart: new ChartRecordReader(db, chartTable) };
  });
}
