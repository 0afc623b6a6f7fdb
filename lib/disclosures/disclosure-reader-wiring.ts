/** The accounting reader a Lambda container builds once (GET /disclosures); apart from the log, so no other function bundles its Query. */
import { dynamoDbClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { tableName } from '../dynamo/table-names';
import { DisclosureReader } from './disclosure-reader';

const readers = new ContainerCache<DisclosureReader>();

/** Reads a patient's accounting from the audit table. */
export function disclosureReader(): DisclosureReader {
  return readers.get([dynamoDbClient(), tableName('audit')], ([db, table]) => new DisclosureReader(db, table));
}
