/**
 * SDK clients, built once per container on first use. Endpoints come from the standard
 * service-specific variables (AWS_ENDPOINT_URL_DYNAMODB, _SQS, _KMS, _S3), which the local stack
 * sets and the cloud leaves unset, so the same code runs in both.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { SQSClient } from '@aws-sdk/client-sqs';
import { S3Client } from '@aws-sdk/client-s3';

const clients = new Map<string, unknown>();

function endpointFor(service: 'DYNAMODB' | 'KMS' | 'SQS' | 'S3'): string | undefined {
  return process.env[`AWS_ENDPOINT_URL_${service}`] || undefined;
}

function once<T>(name: string, build: () => T): T {
  let client = clients.get(name) as T | undefined;
  if (!client) {
    client = build();
    clients.set(name, client);
  }
  return client;
}

const common = { maxAttempts: 3 } as const;

export function dynamoDbClient(): DynamoDBClient {
  return once('dynamodb', () => new DynamoDBClient({ ...common, endpoint: endpointFor('DYNAMODB') }));
}

export function kmsClient(): KMSClient {
  return once('kms', () => new KMSClient({ ...common, endpoint: endpointFor('KMS') }));
}

export function sqsClient(): SQSClient {
  return once('sqs', () => new SQSClient({ ...common, endpoint: endpointFor('SQS') }));
}

export function s3Client(): S3Client {
  return once('s3', () => new S3Client({ ...common, endpoint: endpointFor('S3'), forcePathStyle: Boolean(endpointFor('S3')) }));
}

/** Tests and the local stack call this after changing endpoints, so the next call builds fresh clients. */
export function resetClients(): void {
  for (const client of clients.values()) (client as { destroy?: () => void }).destroy?.();
  clients.clear();
}
