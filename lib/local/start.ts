/**
 * `npm start`: the whole service on this machine with demo data. Ctrl-C stops it cleanly.
 * Data lives under .local/ (git-ignored), so a restart keeps everything.
 */
import path from 'node:path';
// the local machine may run Node 20; the deployed runtime is newer, so the SDK's notice is moot here
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
import { DEFAULT_PORTS, startLocalStack, writeEndpointsFile } from './stack';
import { DEMO_KEYS } from './demo-keys';

async function main(): Promise<void> {
  const started = Date.now();
  const root = path.resolve(__dirname, '..', '..');
  const dataDir = path.join(root, '.local');
  const port = (name: string, fallback: number) => (process.env[name] ? Number(process.env[name]) : fallback);
  const stack = await startLocalStack({
    dataDir,
    ports: {
      api: port('PORT', DEFAULT_PORTS.api),
      dynamodb: port('DYNAMODB_PORT', DEFAULT_PORTS.dynamodb),
      sqs: port('SQS_PORT', DEFAULT_PORTS.sqs),
      kms: port('KMS_PORT', DEFAULT_PORTS.kms),
      staffSignIn: port('STAFF_SIGN_IN_PORT', DEFAULT_PORTS.staffSignIn),
    },
    onTableRebuilt: (table, items) => process.stdout.write(`local table ${table} rebuilt for an index this version adds (${items} items kept)\n`),
  });
  const endpointsFile = path.join(dataDir, 'endpoints.json');
  writeEndpointsFile(endpointsFile, stack);
  const lines = [
    `interop local stack ready in ${Date.now() - started} ms`,
    `  API          ${stack.urls.api}`,
    `  DynamoDB     ${stack.urls.dynamodb}   (dynalite, data in .local/dynamodb)`,
    `  SQS + S3     ${stack.urls.sqs}   (fauxqs)`,
    `  KMS          ${stack.urls.kms}   (key ${stack.kmsKeyId})`,
    `  endpoints    ${path.relative(root, endpointsFile)}`,
    ...(stack.urls.staffIssuer
      ? [
          `  inbox page   ${stack.urls.api}/inbox   (staff sign-in ${stack.urls.staffIssuer}: demo-reviewer / demo-reviewer-password, demo-viewer / demo-viewer-password)`,
        ]
      : []),
    `  demo keys    ${DEMO_KEYS.map((k) => k.secret).join(', ')}`,
    // HL7 segments end in CR only: without tr a terminal prints them over each other
    `  try          curl -s -D /dev/stderr -H 'x-api-key: demo-export-key' '${stack.urls.api}/exportHl7Note?patientId=demo-patient-1&noteId=demo-note-1' | tr '\\r' '\\n'`,
  ];
  process.stdout.write(lines.join('\n') + '\n');
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stdout.write(`\n${signal}: stopping\n`);
    await stack.close();
    process.exit(0);
  };
  process.on('SIGINT', () => void stop('SIGINT'));
  process.on('SIGTERM', () => void stop('SIGTERM'));
}

main().catch((error: Error) => {
  process.stderr.write(`local stack failed to start: ${error.name}: ${error.message}\n`);
  process.exit(1);
});
