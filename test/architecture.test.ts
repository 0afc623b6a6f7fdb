/**
 * The architecture rules of .dependency-cruiser.cjs (issue 14) and the bundle rule that no Lambda
 * carries an AWS SDK client its `needs` do not list, checked in `npm test`.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { bundleFunction } from './support/function-bundle';
import { AuthorizerFunction, BackgroundFunctions, HttpEndpoints, type ResourceNeeds } from '../lib/config/service';

const root = path.resolve(__dirname, '..');
const depcruise = path.join(root, 'node_modules', '.bin', 'depcruise');
const config = path.join(root, '.dependency-cruiser.cjs');

interface CruiseViolation {
  rule: { name: string; severity: string };
  from: string;
  to: string;
}

function cruise(cwd: string, targets: string[], extra: string[] = []): { violations: CruiseViolation[] } {
  const out = execFileSync(depcruise, ['--config', config, '--output-type', 'json', ...extra, ...targets], {
    cwd,
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  const result = JSON.parse(out) as { summary: { violations: CruiseViolation[] } };
  // known violations come back with severity "ignore"
  return { violations: result.summary.violations.filter((v) => v.rule.severity !== 'ignore') };
}

describe('architecture rules', () => {
  it('the tree has no violation (no known-violations list: the last ones were removed)', () => {
    const { violations } = cruise(root, ['lib', 'functions', 'infra', 'scripts']);
    expect(violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`)).toEqual([]);
  });

  it('HTTP answers are decided only under lib/http and functions/: no `new HttpProblem` anywhere else in lib/', () => {
    const offenders = execFileSync('git', ['grep', '-l', 'new HttpProblem', '--', 'lib'], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && !f.startsWith('lib/http/') && !f.endsWith('.test.ts'));
    expect(offenders).toEqual([]);
  });

  it('items are marshalled with lib/aws/attribute-values.ts: @aws-sdk/util-dynamodb only in its equivalence tests', () => {
    const importing = `(from |require\\()['"]@aws-sdk/util-dynamodb['"]`;
    const where = ['lib', 'functions', 'infra', 'scripts', 'bench', 'test'];
    const importers = execFileSync('git', ['grep', '--untracked', '-l', '-E', importing, '--', ...where], { cwd: root, encoding: 'utf8' })
      .split('\n')
      .filter(Boolean);
    expect(importers.sort()).toEqual(['lib/aws/attribute-values.test.ts', 'test/integration/attribute-values-store-items.test.ts']);
  });

  it('a deliberate violation fails the rules (lib/hl7 importing lib/http)', () => {
    const { violations } = cruise(path.join(root, 'test', 'architecture-fixtures'), ['lib']);
    expect(violations.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`).sort()).toEqual([
      'domain-not-to-http: lib/hl7/impure-encoder.ts -> lib/http/problem.ts',
      'hl7-is-pure: lib/hl7/impure-encoder.ts -> lib/http/problem.ts',
    ]);
  });
});

const SDK_CLIENT_OF_PACKAGE = {
  '@aws-sdk/client-dynamodb': 'dynamodb',
  '@aws-sdk/client-kms': 'kms',
  '@aws-sdk/client-sqs': 'sqs',
  '@aws-sdk/client-s3': 's3',
  '@aws-sdk/client-api-gateway': 'apigateway',
  '@aws-sdk/client-ssm': 'ssm',
} as const;
type ClientId = (typeof SDK_CLIENT_OF_PACKAGE)[keyof typeof SDK_CLIENT_OF_PACKAGE];

/** The clients a function may carry: DynamoDB always (keys, audit), the others only when `needs` lists them. */
function allowedClients(needs: ResourceNeeds): Set<ClientId> {
  const allowed = new Set<ClientId>(['dynamodb']);
  if (needs.kms?.length) allowed.add('kms');
  if (needs.queues && Object.keys(needs.queues).length) allowed.add('sqs');
  if (needs.documentsBucket) allowed.add('s3');
  if (needs.apiGatewayKeys) allowed.add('apigateway');
  return allowed;
}

function packageOf(input: string): string | undefined {
  const i = input.lastIndexOf('node_modules/');
  if (i < 0) return undefined;
  const parts = input.slice(i + 'node_modules/'.length).split('/');
  return parts[0]!.startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
}

const functions = [
  { name: AuthorizerFunction.name, needs: AuthorizerFunction.needs },
  ...HttpEndpoints.map((e) => ({ name: e.name, needs: e.needs })),
  ...BackgroundFunctions.map((f) => ({ name: f.name, needs: f.needs })),
];

/** Functions that read the chart and never write it: the exports, the FHIR reads and searches, the inbox and held reads. */
const CHART_READ_ONLY = /^(export|fhir|getInbox|searchInbox|listInterop|getHeld|listHeld|searchHeld)/;
/** Functions that only read the forms table (PacketReader, PacketStateReader) and form intake, HTTP or FHIR (PacketIntakeWriter): none of FormsStore's writes. */
const FORMS_WITHOUT_STORE = /^(getInbox|searchInbox|listInterop|searchHeld|receiveFormIntakeScope$|receiveFhir)/;

describe('Lambda bundles', () => {
  it.each(functions.map((f) => [f.name, f.needs] as const))(
    '%s carries no SDK client outside its needs, nothing of lib/local nor @aws-sdk/util-dynamodb, no code it cannot call',
    async (name, needs) => {
      const { inputs } = await bundleFunction(name);
      const clients = new Set<ClientId>();
      for (const [input] of inputs) {
        const pkg = packageOf(input);
        const client = pkg ? SDK_CLIENT_OF_PACKAGE[pkg as keyof typeof SDK_CLIENT_OF_PACKAGE] : undefined;
        if (client) clients.add(client);
      }
      const allowed = allowedClients(needs);
      expect([...clients].filter((c) => !allowed.has(c))).toEqual([]);
      expect(inputs.map(([input]) => input).filter((input) => input.startsWith('lib/local/'))).toEqual([]);
      // marshalling is lib/aws/attribute-values.ts (issue 31 item 5)
      expect(inputs.map(([input]) => packageOf(input)).filter((pkg) => pkg === '@aws-sdk/util-dynamodb')).toEqual([]);
      // only what the function can call (issue 31 item 5): no function reads the audit trail back; a
      // function that only reads the chart bundles ChartReader, not the writers of ChartStore; the FHIR
      // reads carry no HL7 encoder (lib/hl7 and lib/fhir are side-effect free: their package.json)
      const files = new Set(inputs.map(([input]) => input));
      expect(files.has('lib/audit/audit-trail-reader.ts')).toBe(false);
      if (CHART_READ_ONLY.test(name)) expect(files.has('lib/chart/chart-store.ts')).toBe(false);
      // the forms readers and intake bundle no FormsStore writes (the matcher's, sweeper's, reviewer's); intake no nickname table
      if (FORMS_WITHOUT_STORE.test(name)) expect(files.has('lib/forms/packet-store.ts')).toBe(false);
      if (name === 'receiveFormIntakeScope') expect(files.has('lib/forms/nicknames.ts')).toBe(false);
      // the table definitions (lib/config/tables.ts) only where code reads them (the webhook subscription store):
      // the forms functions take the state index's attribute list from lib/config/forms-state-summary.ts
      if (!/Webhook/.test(name)) expect(files.has('lib/config/tables.ts')).toBe(false);
      if (/^fhir(?!RouteNotFound)/.test(name)) expect([...files].filter((file) => /^lib\/hl7\/(segment|datatypes|header)\.ts$/.test(file))).toEqual([]);
      // FHIR routes that take no query parameter (reads, metadata) bundle no query parsing; those that only page (and take a
      // patient: $everything, the Encounter and DocumentReference searches) no search-parameter parsers (issue 31 item 5)
      if (/^fhir(\w+Read|Metadata)$/.test(name)) expect(files.has('lib/http/fhir-query.ts')).toBe(false);
      if (/^fhir(\w+Read|Metadata|PatientEverything|EncounterSearch|DocumentReferenceSearch)$/.test(name))
        expect(files.has('lib/fhir/search-params.ts')).toBe(false);
      // only FHIR routes (fhirEndpoint) carry the OperationOutcome writer of their errors
      expect(files.has('lib/fhir/operation-outcome.ts')).toBe(HttpEndpoints.find((e) => e.name === name)?.format === 'fhir');
    },
  );
});

/**
 * Readers of encrypted lab results only decrypt (issue 31 item 5): the FHIR lab reads and searches,
 * $everything, Patient?identifier= and the summary and lab result exports hold an EnvelopeDecryptor,
 * so they bundle neither the encryptor (lib/crypto/envelope.ts) nor KMS GenerateDataKey, nor the
 * result store's writes (lib/results/result-store.ts) nor the notification ledger's writes.
 */
const RESULT_READERS = [
  'fhirObservationRead',
  'fhirObservationSearch',
  'fhirDiagnosticReportRead',
  'fhirDiagnosticReportSearch',
  'fhirPatientEverything',
  'fhirPatientSearch',
  'exportHl7PatientSummary',
  'exportHl7LabResult',
];

/**
 * The lab Observation routes serve the report's Observations without building the report (issue 31 item 5):
 * their bundles carry none of the DiagnosticReport's own elements (accession identifier, presentedForm
 * links, the truncation conclusion), which the DiagnosticReport routes do.
 */
describe('lab Observation bundles', () => {
  const REPORT_ONLY = ['Accession ID', '/exportHl7LabResult?resultId=', 'Some long values or results were left out'];
  it.each([
    ['fhirObservationRead', false],
    ['fhirObservationSearch', false],
    ['fhirDiagnosticReportRead', true],
  ] as const)('%s carries the DiagnosticReport builder: %s', async (name, carries) => {
    const { code } = await bundleFunction(name);
    expect(REPORT_ONLY.map((text) => code.includes(text))).toEqual(REPORT_ONLY.map(() => carries));
  });
});

describe('result reader bundles', () => {
  it.each(RESULT_READERS)('%s bundles no encryptor, no GenerateDataKey, no result store writes', async (name) => {
    const { files, code } = await bundleFunction(name);
    // Patient?identifier= decrypts no result, it only unwraps the lookup key (KMS Decrypt)
    if (name !== 'fhirPatientSearch') expect(files).toEqual(expect.arrayContaining(['lib/crypto/envelope-decryptor.ts']));
    expect(files.filter((file) => file === 'lib/crypto/envelope.ts' || file === 'lib/results/result-store.ts')).toEqual([]);
    expect(files.filter((file) => /@aws-sdk\/client-kms\/.*GenerateDataKey/.test(file))).toEqual([]);
    expect(declaresClass(code, 'NotificationLedger')).toBe(false);
    expect(code).not.toMatch(/\bsealRecord\b/);
  });
});

/** Whether a (non-minified) bundle declares a class: esbuild writes `var Name = class ...` or `class Name ...`. */
function declaresClass(code: string, name: string): boolean {
  return new RegExp(`\\b(class ${name}|${name} = class)\\b`).test(code);
}

/**
 * Writers of lab results bundle what their path runs (issue 31 item 5): LabResultWriter, and none of
 * the result reads (the summary and version readers, LabResultStore), none of the retry job's reads of
 * what is owed (NotificationLedger: VersionNotifications only), no GetObject (ResultDocumentWriter),
 * only ChartItemReader of the chart reads; intake's held records only HeldRecordHolder, its note
 * writes only ChartNoteWriter, its authority owners only AuthorityOwnerReader (not ApiKeyStore).
 */
const RESULT_READS = [
  'lib/results/result-summary-reader.ts',
  'lib/results/result-version-reader.ts',
  'lib/results/result-reader.ts',
  'lib/results/result-store.ts',
];
const LAB_RESULT_WRITERS = ['receiveTestData', 'receiveHl7', 'receiveFhirDiagnosticReport', 'receiveFhirBundle'];

describe('lab result writer bundles', () => {
  it.each(LAB_RESULT_WRITERS)('%s bundles the result writer, none of the result reads nor the retry reads', async (name) => {
    const { files, code } = await bundleFunction(name);
    expect(files).toEqual(expect.arrayContaining(['lib/results/result-writer.ts', 'lib/chart/chart-reader.ts']));
    expect(declaresClass(code, 'LabResultWriter')).toBe(true);
    expect(files.filter((file) => RESULT_READS.includes(file))).toEqual([]);
    for (const reader of ['NotificationLedger', 'ResultDocumentReader', 'ResultDocumentStore', 'ChartRecordReader', 'ChartReader'])
      expect([reader, declaresClass(code, reader)]).toEqual([reader, false]);
    expect(files.filter((file) => file === 'lib/chart/chart-store.ts' || file === 'lib/keys/api-key-store.ts')).toEqual([]);
    if (name !== 'receiveTestData') expect([declaresClass(code, 'HeldRecordHolder'), declaresClass(code, 'HeldRecordStore')]).toEqual([true, false]);
    if (name === 'receiveHl7') expect([declaresClass(code, 'ChartNoteWriter'), declaresClass(code, 'AuthorityOwnerReader')]).toEqual([true, true]);
  });

  it('routeHeldRecord bundles the writer and the version reads, no summary reads, no LabResultStore, no ChartStore', async () => {
    const { files, code } = await bundleFunction('routeHeldRecord');
    expect(files).toEqual(expect.arrayContaining(['lib/results/result-writer.ts', 'lib/results/result-version-reader.ts', 'lib/chart/chart-note-writer.ts']));
    expect(files.filter((file) => ['lib/results/result-summary-reader.ts', 'lib/results/result-store.ts', 'lib/chart/chart-store.ts'].includes(file))).toEqual(
      [],
    );
    expect(declaresClass(code, 'NotificationLedger')).toBe(false);
  });

  it('the class test sees a class (esbuild writes `var Name = class`)', async () => {
    const { code } = await bundleFunction('retryResultNotifications');
    expect(declaresClass(code, 'NotificationLedger')).toBe(true);
  });
});

/**
 * FHIR intake bundles only what its route can run (issue 31 item 5): POST /fhir/QuestionnaireResponse
 * carries no lab result mapping, validator nor writer; POST /fhir/DiagnosticReport no form intake;
 * neither the Bundle rules (transaction / batch); a Bundle may hold both, so POST /fhir carries all.
 */
const BUNDLE_RULES = ['lib/fhir-intake/bundle-intake.ts'];
const LAB_REPORT_INTAKE = [
  'lib/fhir-intake/lab-report-entries.ts',
  'lib/fhir-intake/lab-report-mapping.ts',
  'lib/results/generated/lab-result.validator.js',
  'lib/results/receive.ts',
  'lib/intake/held-records.ts',
];
const QUESTIONNAIRE_RESPONSE_INTAKE = [
  'lib/fhir-intake/questionnaire-response-entries.ts',
  'lib/fhir-intake/questionnaire-mapping.ts',
  'lib/forms/generated/form-packet.validator.js',
  'lib/forms/intake.ts',
];

describe('FHIR intake bundles', () => {
  it.each([
    ['receiveFhirQuestionnaireResponse', { carries: QUESTIONNAIRE_RESPONSE_INTAKE, lacks: [...LAB_REPORT_INTAKE, ...BUNDLE_RULES] }],
    ['receiveFhirDiagnosticReport', { carries: LAB_REPORT_INTAKE, lacks: [...QUESTIONNAIRE_RESPONSE_INTAKE, ...BUNDLE_RULES] }],
    ['receiveFhirBundle', { carries: [...LAB_REPORT_INTAKE, ...QUESTIONNAIRE_RESPONSE_INTAKE, ...BUNDLE_RULES], lacks: [] }],
  ])('%s bundles the intake of its resource types and no other', async (name, { carries, lacks }) => {
    const { files } = await bundleFunction(name);
    expect(files).toEqual(expect.arrayContaining(carries));
    expect(files.filter((file) => lacks.includes(file))).toEqual([]);
  });
});
