/**
 * The assigning authorities patient resolution reads (lib/intake/patient-resolution.ts), from the
 * environment: the chart's own, and the owner of any other, kept for the container's life under the
 * access-record bound (lib/keys/access-records.ts). One wiring for HL7 intake and FHIR lab intake.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ContainerCache } from '../aws/container-cache';
import { tableName } from '../dynamo/table-names';
import { accessRecordMaxAgeSeconds, CachedAuthorityOwners } from '../keys/access-records';
import { AuthorityOwnerReader } from '../keys/authority-owner-reader';
import { chartAssigningAuthority } from '../keys/chart-authority';
import type { ResolutionDependencies } from './patient-resolution';

const authorityOwners = new ContainerCache<CachedAuthorityOwners>();

export function intakeAuthorities(db: DynamoDBClient): ResolutionDependencies['authorities'] {
  const owners = authorityOwners.get(
    [db, tableName('keys'), accessRecordMaxAgeSeconds()],
    ([client, table, age]) => new CachedAuthorityOwners(new AuthorityOwnerReader(client, table), age),
  );
  return { chart: chartAssigningAuthority(), ownerOf: (authority) => owners.ownerOf(authority, new Date()) };
}
