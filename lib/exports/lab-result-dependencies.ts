/**
 * Wiring of the lab result export: the result store with its S3 documents (reports kept outside
 * the item) and KMS Decrypt, and the chart store. No SQS client (the export publishes nothing).
 */
import { dynamoDbClient, kmsClient, s3Client } from '../aws/clients';
import { optionalEnv, requireEnv } from '../aws/environment';
import { ChartStore } from '../chart/chart-store';
import { Env } from '../config/service';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { tableName } from '../dynamo/table-names';
import { ResultDocumentStore } from '../results/documents';
import { LAB_RESULT_KEY_PURPOSE, LabResultStore } from '../results/result-store';
import type { LabResultExportDependencies } from './lab-result-export';

let cached: { clients: unknown[]; deps: LabResultExportDependencies } | undefined;

export function labResultExportDependencies(): LabResultExportDependencies {
  const db = dynamoDbClient();
  const kms = kmsClient();
  const s3 = s3Client();
  const clients = [db, kms, s3, tableName('results'), tableName('chart'), requireEnv(Env.documentsBucket)];
  if (!cached || cached.clients.some((c, i) => c !== clients[i])) {
    const keyId = optionalEnv(Env.kmsKeyId, 'unset');
    const table = tableName('results');
    const store = new LabResultStore({
      db,
      table,
      encryptor: new EnvelopeEncryptor({ kms, keyId, purpose: LAB_RESULT_KEY_PURPOSE }),
      documents: new ResultDocumentStore(s3, requireEnv(Env.documentsBucket)),
      lookupKeys: { db, table, kms, kmsKeyId: keyId === 'unset' ? undefined : keyId },
    });
    cached = { clients, deps: { results: store, chart: new ChartStore(db, tableName('chart')) } };
  }
  return cached.deps;
}
