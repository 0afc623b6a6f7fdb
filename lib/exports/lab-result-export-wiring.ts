/**
 * Wiring of the lab result export: the result store with its S3 documents (reports kept outside
 * the item) and KMS Decrypt (a version reader: no sealing, no GenerateDataKey), and the chart reader. No SQS client (the export publishes nothing).
 */
import { dynamoDbClient, kmsClient, s3Client } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { requireEnv } from '../aws/environment';
import { ChartRecordReader } from '../chart/chart-reader';
import { Env } from '../config/service';
import { EnvelopeDecryptor } from '../crypto/envelope-decryptor';
import { tableName } from '../dynamo/table-names';
import { ResultDocumentReader } from '../results/documents';
import { relationshipLookup } from '../relationships/relationship-wiring';
import { LabResultVersionReader } from '../results/result-version-reader';
import type { LabResultExportDependencies } from './lab-result-export';

const cache = new ContainerCache<LabResultExportDependencies>();

export function labResultExportDependencies(): LabResultExportDependencies {
  const inputs = [dynamoDbClient(), kmsClient(), s3Client(), tableName('results'), tableName('chart'), requireEnv(Env.documentsBucket)] as const;
  return cache.get(inputs, ([db, kms, s3, table, chartTable, bucket]) => {
    const results = new LabResultVersionReader({
      db,
      table,
      decryptor: new EnvelopeDecryptor({ kms }),
      documents: new ResultDocumentReader(s3, bucket),
      lookupKeys: { db, table, kms },
    });
    return { results, chart: new ChartRecordReader(db, chartTable), relationships: relationshipLookup };
  });
}
