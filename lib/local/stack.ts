/**
 * The whole service on one machine: DynamoDB (dynalite), SQS + S3 (fauxqs), a KMS-compatible
 * endpoint, and the API Gateway emulation running the real handlers. Used by `npm start`,
 * the CLIs and the integration tests (on free ports, in memory). Every server binds to loopback.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { CreateQueueCommand, GetQueueAttributesCommand, SQSClient } from '@aws-sdk/client-sqs';
import { CreateBucketCommand, HeadBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { Env, Queues, Tables, resourceName, type QueueId, type TableId } from '../config/service';
import { resetClients } from '../aws/clients';
import { ApiKeyStore } from '../keys/api-key-store';
import { ensureTables } from './dynamo-tables';
import { loadDemoKeys } from './demo-keys';
import { loadDemoRelationships } from './demo-relationships';
import { startApiServer, type ApiServer } from './api-gateway';
import { startKmsServer } from './kms-server';
import { ChartStore } from '../chart/chart-store';
import { loadDemoChart } from '../chart/demo-data';
import { MrnIndex } from '../intake/mrn-index';
import { MrnPatientIndex } from '../intake/receive-hl7-wiring';
import { receiveDependencies } from '../results/result-wiring';
import { ChartPatientWriter } from '../forms/chart-patient-writer';
import { explicitFormsDependencies } from '../forms/forms-wiring';
import { startLocalFormWorkers } from './form-workers';
import { startLocalWebhookWorkers } from './webhook-workers';
import { startLocalKeyExpiry } from './key-workers';
import { startStaffSignIn } from './staff-sign-in';

export const LOCAL_REGION = 'us-east-1';
export const LOCAL_CREDENTIALS = { accessKeyId: 'local', secretAccessKey: 'local' };
export const LOCAL_KMS_KEY_ALIAS = 'alias/interop-local';
export const DEFAULT_PORTS = { api: 3000, dynamodb: 8000, sqs: 4566, kms: 4599, staffSignIn: 4598 } as const;

export interface LocalStackOptions {
  host?: string;
  /** 0 = any free port */
  ports?: Partial<Record<keyof typeof DEFAULT_PORTS, number>>;
  /** directory for on-disk data (DynamoDB, KMS keys); in memory when absent */
  dataDir?: string;
  prefix?: string;
  loadDemoData?: boolean;
  /** extra environment for the handlers (e.g. a smaller anonymous limit in tests) */
  env?: Record<string, string>;
  /** poll the matching, notifications and webhook deliveries queues and run the sweeper in-process, as the cloud's triggers would (default true) */
  backgroundWorkers?: boolean;
  /** start the local OpenID provider for staff sign-in to the inbox page (default true) */
  staffSignIn?: boolean;
  /** told when a table kept on disk was rebuilt because it lacked an index this version declares */
  onTableRebuilt?: (table: string, items: number) => void;
}

export interface LocalStack {
  urls: { api: string; dynamodb: string; sqs: string; s3: string; kms: string; staffIssuer?: string };
  tables: Record<TableId, string>;
  queues: Record<QueueId, { url: string; dlqUrl: string }>;
  bucket: string;
  kmsKeyId: string;
  /** the environment the handlers run with (also exported into process.env) */
  env: Record<string, string>;
  close(): Promise<void>;
}

interface Closable {
  close(): Promise<void>;
}

async function listen(server: Server, host: string, port: number): Promise<number> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return (server.address() as AddressInfo).port;
}

export async function startLocalStack(options: LocalStackOptions = {}): Promise<LocalStack> {
  const host = options.host ?? '127.0.0.1';
  const ports = { ...DEFAULT_PORTS, ...options.ports };
  const prefix = options.prefix ?? 'interop-local';
  const closers: Closable[] = [];
  const closeAll = async () => {
    for (const c of closers.reverse()) await c.close().catch(() => undefined);
  };
  try {
    if (options.dataDir) mkdirSync(options.dataDir, { recursive: true });

    // DynamoDB: dynalite, on disk under dataDir when given
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const dynalite = require('dynalite') as (opts: Record<string, unknown>) => Server;
    const dynamoServer = dynalite({
      createTableMs: 0,
      deleteTableMs: 0,
      updateTableMs: 0,
      ...(options.dataDir ? { path: path.join(options.dataDir, 'dynamodb') } : {}),
    });
    const dynamoPort = await listen(dynamoServer, host, ports.dynamodb);
    closers.push({ close: () => new Promise<void>((resolve) => dynamoServer.close(() => resolve())) });

    // SQS + S3: fauxqs app, bound to loopback
    const { buildApp } = await import('fauxqs');
    const fauxqs = buildApp({ logger: false, host, defaultRegion: LOCAL_REGION });
    await fauxqs.listen({ port: ports.sqs, host });
    const sqsPort = (fauxqs.server.address() as AddressInfo).port;
    closers.push({ close: () => fauxqs.close() });

    // KMS-compatible endpoint
    const kms = await startKmsServer({
      host,
      port: ports.kms,
      dataDir: options.dataDir ? path.join(options.dataDir, 'kms') : undefined,
      keys: [LOCAL_KMS_KEY_ALIAS],
    });
    closers.push(kms);

    const urls: LocalStack['urls'] = {
      api: '',
      dynamodb: `http://${host}:${dynamoPort}`,
      sqs: `http://${host}:${sqsPort}`,
      s3: `http://${host}:${sqsPort}`,
      kms: kms.url,
    };
    const clientConfig = { region: LOCAL_REGION, credentials: LOCAL_CREDENTIALS };
    const db = new DynamoDBClient({ ...clientConfig, endpoint: urls.dynamodb });
    const sqs = new SQSClient({ ...clientConfig, endpoint: urls.sqs });
    const s3 = new S3Client({ ...clientConfig, endpoint: urls.s3, forcePathStyle: true });
    closers.push({ close: async () => [db, sqs, s3].forEach((c) => c.destroy()) });

    const tables = await ensureTables(db, prefix, { onRebuild: options.onTableRebuilt, ...(options.dataDir ? { backupDir: options.dataDir } : {}) });
    const queues = {} as LocalStack['queues'];
    for (const def of Object.values(Queues)) {
      const dlqName = resourceName(prefix, `${def.baseName}-dlq`);
      const dlq = await sqs.send(new CreateQueueCommand({ QueueName: dlqName }));
      const dlqAttrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlq.QueueUrl, AttributeNames: ['QueueArn'] }));
      const queue = await sqs.send(
        new CreateQueueCommand({
          QueueName: resourceName(prefix, def.baseName),
          Attributes: {
            VisibilityTimeout: String(def.visibilityTimeoutSeconds),
            RedrivePolicy: JSON.stringify({ deadLetterTargetArn: dlqAttrs.Attributes!.QueueArn, maxReceiveCount: def.maxReceiveCount }),
          },
        }),
      );
      queues[def.id] = { url: queue.QueueUrl!, dlqUrl: dlq.QueueUrl! };
    }
    const bucket = resourceName(prefix, 'documents');
    try {
      await s3.send(new HeadBucketCommand({ Bucket: bucket }));
    } catch {
      await s3.send(new CreateBucketCommand({ Bucket: bucket }));
    }

    const env: Record<string, string> = {
      AWS_REGION: LOCAL_REGION,
      AWS_ACCESS_KEY_ID: LOCAL_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: LOCAL_CREDENTIALS.secretAccessKey,
      AWS_ENDPOINT_URL_DYNAMODB: urls.dynamodb,
      AWS_ENDPOINT_URL_SQS: urls.sqs,
      AWS_ENDPOINT_URL_S3: urls.s3,
      AWS_ENDPOINT_URL_KMS: urls.kms,
      [Env.stage]: 'local',
      [Env.kmsKeyId]: LOCAL_KMS_KEY_ALIAS,
      [Env.documentsBucket]: bucket,
      [Env.hl7SendingApplication]: 'INTEROP',
      [Env.hl7SendingFacility]: 'DEMO-HOSP',
      [Env.anonRateLimit]: '300',
      [Env.anonRateWindowSeconds]: '60',
      ...Object.fromEntries(Object.entries(tables).map(([id, name]) => [tableEnv(id as TableId), name])),
      ...Object.fromEntries(Object.values(Queues).map((q) => [q.env, queues[q.id].url])),
      ...(options.env ?? {}),
    };
    Object.assign(process.env, env);
    resetClients();

    if (options.loadDemoData !== false) {
      const now = new Date();
      await loadDemoKeys(new ApiKeyStore(db, tables.keys), now);
      // the chart-patient writer keeps the form matcher's keyed index in step with the chart
      const kms = new KMSClient({ ...clientConfig, endpoint: urls.kms });
      try {
        const forms = explicitFormsDependencies({ db, kms, kmsKeyId: LOCAL_KMS_KEY_ALIAS, formsTable: tables.forms, chartTable: tables.chart });
        // and the HL7 intake's MRN index (PID-3 -> chart patient), as the import CLI does
        const mrnIndex = new MrnPatientIndex(() => receiveDependencies().keys(), new MrnIndex(db, tables.chart));
        await loadDemoChart(new ChartPatientWriter(new ChartStore(db, tables.chart), forms, () => now, [mrnIndex]));
        await loadDemoRelationships({ db, table: tables.chart }, now);
      } finally {
        kms.destroy();
      }
    }

    // requests reaching the API before every part below is up wait instead of meeting a half-started stack
    let markReady!: () => void;
    let markFailed!: (error: unknown) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      markFailed = reject;
    });
    closers.push({ close: async () => markFailed(new Error('local stack stopped')) });
    const api: ApiServer = await startApiServer({ host, port: ports.api, ready });
    closers.push(api);
    urls.api = api.url;
    if (options.staffSignIn !== false) {
      // the redirect URI names the API's port, so the provider starts after the API listens
      const staff = await startStaffSignIn({ host, port: ports.staffSignIn, apiUrl: api.url });
      closers.push(staff);
      urls.staffIssuer = staff.issuer;
      Object.assign(env, staff.env);
      Object.assign(process.env, staff.env);
    }
    if (options.backgroundWorkers !== false) {
      // stopped before the servers they talk to (closers run in reverse)
      const workers = startLocalFormWorkers({ intervalMs: 200, sweepIntervalMs: 30_000 });
      closers.push({ close: () => workers.stop() });
      const webhooks = startLocalWebhookWorkers({ intervalMs: 200 });
      closers.push({ close: () => webhooks.stop() });
      // the cloud's rate(15 minutes) schedule of revokeExpiredKeys, every minute
      const keyExpiry = startLocalKeyExpiry({ intervalMs: 60_000 });
      closers.push({ close: () => keyExpiry.stop() });
    }
    closers.push({ close: async () => resetClients() });
    markReady();

    return { urls, tables, queues, bucket, kmsKeyId: LOCAL_KMS_KEY_ALIAS, env, close: closeAll };
  } catch (error) {
    await closeAll();
    throw error;
  }
}

function tableEnv(id: TableId): string {
  return Tables[id].env;
}

/** What `npm start` writes to .local/endpoints.json for the CLIs and testers. */
export function writeEndpointsFile(file: string, stack: LocalStack): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(
    file,
    JSON.stringify(
      {
        api: stack.urls.api,
        dynamodb: stack.urls.dynamodb,
        sqs: stack.urls.sqs,
        s3: stack.urls.s3,
        kms: stack.urls.kms,
        ...(stack.urls.staffIssuer ? { staffIssuer: stack.urls.staffIssuer, inbox: `${stack.urls.api}/inbox` } : {}),
        region: LOCAL_REGION,
        kmsKeyId: stack.kmsKeyId,
        bucket: stack.bucket,
        tables: stack.tables,
        queues: stack.queues,
        env: stack.env,
      },
      null,
      2,
    ) + '\n',
  );
}
