/**
 * `npm run audit -- --patient ID`: the audit trail of one patient (who, what, when, outcome),
 * oldest first, from the running local stack or the stage in the environment. Ids only, no PHI.
 */
import { parseArgs } from 'node:util';
import { AuditTrail } from '../lib/audit/audit-trail';
import { dynamoDbClient } from '../lib/aws/clients';
import { tableName } from '../lib/dynamo/table-names';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { explainTargetFailure } from '../lib/admin/target';

async function main(argv: string[]): Promise<number> {
  const { values } = parseArgs({ args: argv, options: { patient: { type: 'string' }, json: { type: 'boolean' } } });
  if (!values.patient) {
    process.stderr.write('usage: npm run audit -- --patient ID [--json]\n');
    return 2;
  }
  useLocalStackEnvironment();
  const records = await new AuditTrail(dynamoDbClient(), tableName('audit')).forPatient(values.patient);
  if (values.json) process.stdout.write(JSON.stringify(records, null, 2) + '\n');
  else
    for (const r of records) {
      const ids = Object.entries(r.resourceIds ?? {})
        .map(([k, v]) => `${k}=${v}`)
        .join(' ');
      process.stdout.write(
        `${r.at}  ${r.action.padEnd(24)} ${r.outcome.padEnd(9)} ${String(r.status)}  partner=${r.partnerId} key=${r.keyId} request=${r.requestId} ${ids}\n`,
      );
    }
  process.stderr.write(`${records.length} audit records for patient ${values.patient}\n`);
  return 0;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`${explainTargetFailure(error, undefined) ?? error.message}\n`);
    process.exit(1);
  },
);
