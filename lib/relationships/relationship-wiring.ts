/** The relationship lookup a Lambda container builds once: the chart table through the shared DynamoDB client. */
import { dynamoDbClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { tableName } from '../dynamo/table-names';
import type { RelationshipLookup } from './patient-access';
import { readRelationship, type RelationshipTable } from './relationships';

const tables = new ContainerCache<RelationshipTable>();

/** The chart table's relationships, as the request paths read and write them. */
export function relationshipTable(): RelationshipTable {
  return tables.get([dynamoDbClient(), tableName('chart')], ([db, table]) => ({ db, table }));
}

/** One GetItem per call; never cached, so an ended relationship stops access at once. */
export const relationshipLookup: RelationshipLookup = (partnerId, patientId) => readRelationship(relationshipTable(), partnerId, patientId);
