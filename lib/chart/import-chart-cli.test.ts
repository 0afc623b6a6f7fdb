import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { resolveTarget, runImportChart, type CliIo } from '../../scripts/import-chart';
import { ChartStore } from './chart-store';
import { demoChartDocument } from './demo-data';
import { startLocalDynamoDb, type LocalDynamoDb } from './testing/local-dynamodb';
import { startKmsServer, type KmsServer } from '../local/kms-server';
import { FormsStore } from '../forms/packet-store';
import { ScanCommand } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { MrnIndex } from '../intake/mrn-index';
import { loadResultKeys } from '../results/lookup-keys';

const KEY_ALIAS = 'alias/import-cli-test';
let local: LocalDynamoDb;
let kms: KmsServer;
let table: string;
let formsTable: string;
let resultsTable: string;
let dir: string;
/** the environment of a deployed stage, pointed at the local servers */
let stageEnv: NodeJS.ProcessEnv;

beforeAll(async () => {
  local = await startLocalDynamoDb();
  kms = await startKmsServer({ host: '127.0.0.1', port: 0, keys: [KEY_ALIAS] });
  const tables = await local.createTables('import-cli-test');
  table = tables.chart;
  formsTable = tables.forms;
  resultsTable = tables.results;
  dir = mkdtempSync(path.join(tmpdir(), 'chart-import-cli-'));
  stageEnv = {
    AWS_ENDPOINT_URL_DYNAMODB: local.endpoint,
    AWS_ENDPOINT_URL_KMS: kms.url,
    CHART_TABLE: table,
    FORMS_TABLE: formsTable,
    RESULTS_TABLE: resultsTable,
    KMS_KEY_ID: KEY_ALIAS,
  };
});

afterAll(async () => {
  await kms.close();
  await local.stop();
});

function io(env: NodeJS.ProcessEnv, endpointsFile = path.join(dir, 'no-such-endpoints.json')): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return { env, endpointsFile, stdout, stderr, out: (l) => stdout.push(l), err: (l) => stderr.push(l) };
}

function writeJson(name: string, value: unknown): string {
  const file = path.join(dir, name);
  writeFileSync(file, typeof value === 'string' ? value : JSON.stringify(value));
  return file;
}

describe('npm run import', () => {
  it('imports the demo chart into the table named by the environment and prints counts only', async () => {
    const file = writeJson('demo.json', demoChartDocument());
    const cli = io(stageEnv);
    expect(await runImportChart([file], cli)).toBe(0);
    expect(cli.stderr).toEqual([]);
    expect(cli.stdout).toEqual([
      `imported 5 patients, 4 encounters, 4 notes, 3 assessments (16 items) into ${table} (environment); 5 patients indexed for form matching and by MRN`,
    ]);
    expect(await new ChartStore(local.db, table).getNote('demo-patient-2', 'demo-note-2')).toBeDefined();
    // the same command indexed every patient for form matching
    expect((await new FormsStore(local.db, formsTable).getMatchIndexManifest('demo-patient-2')).length).toBeGreaterThan(0);
    // and by (assigning authority, MRN) for the HL7 intake, under a keyed hash (no MRN in any key)
    const keys = (await loadResultKeys(
      {
        db: local.db,
        table: resultsTable,
        kms: new KMSClient({ endpoint: kms.url, region: 'us-east-1', credentials: { accessKeyId: 'local', secretAccessKey: 'local' } }),
      },
      { create: false },
    ))!;
    expect(await new MrnIndex(local.db, table).find(keys.patientIdentifierKey('DEMO-HOSP', 'DEMO-000002'))).toBe('demo-patient-2');
    const scan = await local.db.send(new ScanCommand({ TableName: table }));
    expect(JSON.stringify(scan.Items)).not.toContain('MRNIDX#DEMO');
  });

  it('warns, with ids only, when an imported patient has the MRN of an earlier one', async () => {
    const doc = {
      patients: [
        {
          patientId: 'dup-mrn-patient',
          mrn: 'DEMO-000002',
          assigningAuthority: 'DEMO-HOSP',
          name: { family: 'Other', given: 'Person' },
          birthDate: '1990-01-01',
        },
      ],
    };
    const cli = io(stageEnv);
    expect(await runImportChart([writeJson('dup.json', doc)], cli)).toBe(0);
    expect(cli.stderr.join('\n')).toMatch(/1 patient\(s\) share an assigning authority \+ MRN .*: dup-mrn-patient$/);
    expect(cli.stderr.join('\n')).not.toContain('DEMO-000002');
  });

  it('refuses a stage environment without the results table: the MRN index must be kept in step too', async () => {
    const cli = io({ ...stageEnv, RESULTS_TABLE: '' });
    expect(await runImportChart([writeJson('demo-noresults.json', demoChartDocument())], cli)).toBe(1);
    expect(cli.stderr.join('\n')).toMatch(/RESULTS_TABLE/);
  });

  it('refuses a stage environment without the forms table or key: the index must be kept in step', async () => {
    const file = writeJson('demo-noforms.json', demoChartDocument());
    const cli = io({ AWS_ENDPOINT_URL_DYNAMODB: local.endpoint, CHART_TABLE: table });
    expect(await runImportChart([file], cli)).toBe(1);
    expect(cli.stderr.join('\n')).toMatch(/FORMS_TABLE/);
  });

  it('reads the local stack endpoints file when the environment names no table', async () => {
    const endpoints = writeJson('endpoints.json', {
      dynamodb: local.endpoint,
      kms: kms.url,
      kmsKeyId: KEY_ALIAS,
      tables: { chart: table, forms: formsTable, results: resultsTable, keys: 'x' },
      region: 'us-east-1',
    });
    expect(resolveTarget({}, endpoints)).toEqual({
      table,
      formsTable,
      resultsTable,
      kmsKeyId: KEY_ALIAS,
      endpoint: local.endpoint,
      kmsEndpoint: kms.url,
      region: 'us-east-1',
      source: 'local stack',
    });
    const file = writeJson('demo2.json', demoChartDocument());
    const cli = io({}, endpoints);
    expect(await runImportChart([file], cli)).toBe(0);
    expect(cli.stdout[0]).toContain('(local stack)');
  });

  it('tells the user to run npm start when there is no target', async () => {
    const file = writeJson('demo3.json', demoChartDocument());
    const cli = io({});
    expect(await runImportChart([file], cli)).toBe(1);
    expect(cli.stderr.join('\n')).toMatch(/run `npm start` first/);
  });

  it('prints every failing pointer, exits 1 and writes nothing; no PHI in the output', async () => {
    const doc = demoChartDocument() as { patients: Array<Record<string, unknown>> };
    doc.patients[0].patientId = 'cli-invalid-1';
    doc.patients[0].sex = 'Q';
    doc.patients[0].birthDate = '1980-02-30';
    (doc.patients[1] as { patientId: string }).patientId = 'cli-invalid-2';
    delete doc.patients[1].mrn;
    const file = writeJson('invalid.json', doc);
    const cli = io(stageEnv);
    expect(await runImportChart([file], cli)).toBe(1);
    expect(cli.stderr).toEqual([
      `${file}: 3 problems; nothing was written`,
      '  /patients/0/birthDate: must be a real calendar date YYYY-MM-DD',
      '  /patients/0/sex: must be one of A, F, M, N, O, U',
      '  /patients/1/mrn: is required',
    ]);
    expect(cli.stdout).toEqual([]);
    const store = new ChartStore(local.db, table);
    expect(await store.getPatientSummary('cli-invalid-1', 100)).toEqual({ records: [] });
    expect(await store.getPatientSummary('cli-invalid-2', 100)).toEqual({ records: [] });
  });

  it('does not echo file content when the JSON does not parse', async () => {
    const file = writeJson('broken.json', '{"patients": [{"name": Secretname}]}');
    const cli = io(stageEnv);
    expect(await runImportChart([file], cli)).toBe(1);
    expect(cli.stderr.join('\n')).not.toContain('Secretname');
  });

  it('validates only with --dry-run', async () => {
    const file = writeJson('demo4.json', demoChartDocument());
    const cli = io({});
    expect(await runImportChart([file, '--dry-run'], cli)).toBe(0);
    expect(cli.stdout[0]).toMatch(/valid \(5 patients, 4 encounters, 4 notes, 3 assessments\); dry run/);
  });

  it('a missing file argument is a usage error: one line naming where help is', async () => {
    const cli = io({});
    expect(await runImportChart([], cli)).toBe(2);
    expect(cli.stderr).toEqual(['give the FILE to import (see `npm run import -- --help`)']);
  });
});
