/** The disclosure log and the read-volume counter a Lambda container builds once (the shared DynamoDB client). */
import { dynamoDbClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { integerEnv } from '../aws/environment';
import { Env } from '../config/environment';
import { tableName } from '../dynamo/table-names';
import { DisclosureLog } from './disclosure-log';
import { DEFAULT_PATIENT_READS_ALARM_THRESHOLD, PatientReadVolume } from './patient-read-volume';

const logs = new ContainerCache<DisclosureLog>();
const volumes = new ContainerCache<PatientReadVolume>();

/** Appends to the audit table's disclosure partitions. */
export function disclosureLog(): DisclosureLog {
  return logs.get([dynamoDbClient(), tableName('audit')], ([db, table]) => new DisclosureLog(db, table));
}

/** The distinct-patients-per-partner-hour counter, in the rate-limit table. */
export function patientReadVolume(): PatientReadVolume {
  return volumes.get([dynamoDbClient(), tableName('rateLimit')], ([db, table]) => new PatientReadVolume(db, table));
}

/** Distinct patients one partner may read in an hour before the alarm line (PATIENT_READS_ALARM_THRESHOLD, default 500). */
export function patientReadsAlarmThreshold(): number {
  return integerEnv(Env.patientReadsAlarmThreshold, DEFAULT_PATIENT_READS_ALARM_THRESHOLD);
}
