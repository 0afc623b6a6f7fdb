/**
 * `npm run audit -- --patient ID`: the audit trail of one patient (who, what, when, outcome),
 * oldest first, from the running local stack or the stage in the environment. Ids and staff sign-in
 * names only, no PHI. `--partner ID` / `--key KEY_ID`: the changes the operator tools made to a
 * partner and its keys, or to one key (lib/admin/admin-audit.ts), each setting before and after.
 * `disclosures --patient ID [--from --to]`: the patient's accounting of disclosures (docs/disclosures.md).
 */
import type { AuditRecord } from '../lib/audit/audit-trail';
import { AuditTrailReader } from '../lib/audit/audit-trail-reader';
import { dynamoDbClient } from '../lib/aws/clients';
import { tableName } from '../lib/dynamo/table-names';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { UsageError, type CommandSpec } from '../lib/admin/cli-options';
import { readSingleCommand, runCli, runMain, type CliIo } from '../lib/admin/cli-runner';
import { partnerAuditRecords } from '../lib/admin/admin-audit';
import { ApiKeyStore } from '../lib/keys/api-key-store';
import { DisclosureReader, disclosureRange } from '../lib/disclosures/disclosure-reader';
import type { DisclosureRecord } from '../lib/disclosures/disclosure-log';
import { InvalidParameterError } from '../lib/domain-errors';

const keyStore = () => new ApiKeyStore(dynamoDbClient(), tableName('keys'));

const AUDIT_COMMAND: CommandSpec = {
  name: '',
  summary:
    "The audit trail of one patient, oldest first: when, action, outcome, HTTP status, who (partner and key, and the staff member's sign-in name when a person acted), request id and resource ids. Target: the running local stack (.local/endpoints.json), or a deployed stage's environment (its table variables, AWS credentials and region).",
  options: {
    patient: { type: 'string', value: 'ID', description: "the patient's internal id" },
    partner: {
      type: 'string',
      value: 'ID',
      description: 'instead: the changes made to a partner (npm run partners) and to each of its keys (npm run keys, revokeExpiredKeys)',
    },
    key: { type: 'string', value: 'KEY_ID', description: 'instead: the changes made to a key (npm run keys, the scheduled revokeExpiredKeys)' },
    json: { type: 'boolean', description: 'the records as JSON instead of one line each' },
  },
  examples: [
    'npm run audit -- --patient demo-patient-1',
    'npm run audit -- --patient demo-patient-1 --json',
    'npm run audit -- --partner acme-lab',
    'npm run audit -- --key key_0123456789ab',
    'npm run audit -- disclosures --patient demo-patient-1   (the accounting of disclosures; disclosures --help)',
  ],
};

const DISCLOSURES_COMMAND: CommandSpec = {
  name: 'disclosures',
  summary:
    'The accounting of disclosures of one patient (HIPAA 45 CFR 164.528; docs/disclosures.md), oldest first: when, the recipient (partner, key, staff member), purpose of use, what was sent (endpoint, action, resource ids) and the request id. Same target as the audit trail.',
  options: {
    patient: { type: 'string', value: 'ID', description: "the patient's internal id (required)" },
    from: { type: 'string', value: 'DATE', description: 'YYYY-MM-DD or a UTC instant, inclusive (default six years before --to)' },
    to: { type: 'string', value: 'DATE', description: 'YYYY-MM-DD or a UTC instant, inclusive (default now)' },
    json: { type: 'boolean', description: 'the records as JSON instead of one line each' },
  },
  examples: [
    'npm run audit -- disclosures --patient demo-patient-1',
    'npm run audit -- disclosures --patient demo-patient-1 --from 2026-12-01 --to 2026-12-31',
  ],
};

/** One disclosure as a line (ids only). */
export function disclosureLine(d: DisclosureRecord): string {
  const ids = Object.entries(d.resourceIds ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const staff = d.staffUsername ? ` staff=${d.staffUsername}` : '';
  return `${d.at}  ${d.purposeOfUse.padEnd(9)} (${d.purposeSource}) partner=${d.partnerId} key=${d.keyId}${staff} ${d.endpoint} ${d.action} request=${d.requestId}${ids ? ` ${ids}` : ''}\n`;
}

async function disclosures(argv: string[], io: CliIo): Promise<number> {
  const read = readSingleCommand('audit', DISCLOSURES_COMMAND, argv, io);
  if ('exitCode' in read) return read.exitCode;
  if (read.positionals.length > 0) throw new UsageError(`disclosures: unexpected argument "${read.positionals[0]}"`);
  const patientId = read.values.patient;
  if (typeof patientId !== 'string' || patientId === '') throw new UsageError('disclosures: give --patient ID');
  let range;
  try {
    range = disclosureRange({ from: read.values.from as string | undefined, to: read.values.to as string | undefined }, new Date());
  } catch (error) {
    if (error instanceof InvalidParameterError) throw new UsageError(`disclosures: --${error.parameter} ${error.problem}`);
    throw error;
  }
  useLocalStackEnvironment();
  const records = await new DisclosureReader(dynamoDbClient(), tableName('audit')).all(patientId, range);
  if (read.values.json) io.out(JSON.stringify(records, null, 2) + '\n');
  else for (const r of records) io.out(disclosureLine(r));
  io.err(`${records.length} disclosures of patient ${patientId} from ${range.from} to ${range.to}\n`);
  return 0;
}

/** One record as a line: who acted includes the staff member's sign-in name when a person, not a key, acted. */
export function auditLine(r: AuditRecord): string {
  const ids = Object.entries(r.resourceIds ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(' ');
  const staff = r.staffUsername ? ` staff=${r.staffUsername}` : r.staffSubject ? ` staff=${r.staffSubject}` : '';
  const operator = r.operator ? ` operator=${r.operator}` : '';
  const changes = (r.changes ?? []).map((c) => ` ${c.field}: "${c.before}" -> "${c.after}"`).join(';');
  return `${r.at}  ${r.action.padEnd(24)} ${r.outcome.padEnd(9)} ${String(r.status)}  partner=${r.partnerId} key=${r.keyId}${staff}${operator} request=${r.requestId}${ids ? ` ${ids}` : ''}${changes ? ` |${changes}` : ''}\n`;
}

export function main(argv: string[], io: CliIo): Promise<number> {
  return runCli('audit', io, async () => {
    if (argv[0] === 'disclosures') return disclosures(argv.slice(1), io);
    const read = readSingleCommand('audit', AUDIT_COMMAND, argv, io);
    if ('exitCode' in read) return read.exitCode;
    if (read.positionals.length > 0) throw new UsageError(`unexpected argument "${read.positionals[0]}"`);
    const subjects = (['patient', 'partner', 'key'] as const).filter((o) => read.values[o] !== undefined);
    if (subjects.length !== 1) throw new UsageError('give one of --patient ID, --partner ID or --key KEY_ID');
    const subject = subjects[0]!;
    const id = read.values[subject] as string;
    useLocalStackEnvironment();
    const trail = new AuditTrailReader(dynamoDbClient(), tableName('audit'));
    const records =
      subject === 'patient'
        ? await trail.forPatient(id)
        : subject === 'partner'
          ? await partnerAuditRecords({ forResource: (name, resourceId) => trail.forResource(name, resourceId), listKeys: () => keyStore().listKeys() }, id)
          : await trail.forResource(subject, id);
    if (read.values.json) io.out(JSON.stringify(records, null, 2) + '\n');
    else for (const r of records) io.out(auditLine(r));
    io.err(`${records.length} audit records for ${subject} ${id}\n`);
    return 0;
  });
}

if (require.main === module) runMain('audit', main);
