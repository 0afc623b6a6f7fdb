/**
 * Partner-patient relationships: the record that lets a partner reach a chart patient.
 *
 * A patient id, a literal reference or an MRN a partner sends is evidence that names a patient,
 * never authority. What lets a partner read a patient's chart (when its patient access is
 * `related`) or file a record into it (always) is a relationship: partner, chart patient, purpose
 * of use, how it was made, since/until and who made it.
 *
 * Storage: one item in the chart table beside the patient, `pk PATIENT#<patientId>`,
 * `sk RELATION#<partnerId>`. It has no `timeline`, so chart timeline reads never see it. The check
 * on every request is one GetItem of that key: it reads no patient item, so the answer is the same
 * whether or not the patient exists. A partner's relationships are listed by a paged Scan
 * (`npm run partners -- relations`, an operator command); a patient's by a Query.
 *
 * Ending a relationship keeps the item (with `endedAt`, `endedBy`): the accounting of who could
 * reach a patient, and when, stays readable. Writes are single-item conditional puts.
 */
import { GetItemCommand, PutItemCommand, QueryCommand, ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';

/**
 * HL7 v3 PurposeOfUse codes (2.16.840.1.113883.1.11.20448) this service takes. TREAT is the
 * default: a lab or EHR caring for the patient.
 */
export const PURPOSES_OF_USE = ['TREAT', 'ETREAT', 'HPAYMT', 'HOPERAT', 'PUBHLTH', 'HRESCH', 'PATRQT', 'COC', 'CAREMGT', 'HLEGAL', 'HSYSADMIN'] as const;
export type PurposeOfUse = (typeof PURPOSES_OF_USE)[number];
export const DEFAULT_PURPOSE_OF_USE: PurposeOfUse = 'TREAT';

export function isPurposeOfUse(value: string): value is PurposeOfUse {
  return (PURPOSES_OF_USE as readonly string[]).includes(value);
}

/** How a relationship came to be. */
export type RelationshipSource = 'operator' | 'import' | 'staff' | 'held-route' | 'order' | 'demo';
export const RELATIONSHIP_SOURCES: readonly RelationshipSource[] = ['operator', 'import', 'staff', 'held-route', 'order', 'demo'];

export interface PartnerPatientRelationship {
  partnerId: string;
  patientId: string;
  purpose: PurposeOfUse;
  source: RelationshipSource;
  /** ISO 8601: from when it holds */
  since: string;
  /** ISO 8601: it holds until this instant (absent: until ended) */
  until?: string;
  /** who made it: an operator name, a staff username, `import`, `demo` (never PHI) */
  createdBy: string;
  /** set when ended (`unrelate`, staff): the item stays for the accounting */
  endedAt?: string;
  endedBy?: string;
}

export const RELATION_SK_PREFIX = 'RELATION#';
const patientPk = (patientId: string) => `PATIENT#${patientId}`;
const relationSk = (partnerId: string) => `${RELATION_SK_PREFIX}${partnerId}`;

/** Whether the relationship lets its partner reach the patient at `now`. */
export function relationshipHolds(relationship: PartnerPatientRelationship | undefined, now: Date): boolean {
  if (!relationship || relationship.endedAt !== undefined) return false;
  const t = now.getTime();
  if (Date.parse(relationship.since) > t) return false;
  return relationship.until === undefined || t < Date.parse(relationship.until);
}

/** Where relationships are kept: the chart table (`CHART_TABLE`). */
export interface RelationshipTable {
  db: DynamoDBClient;
  table: string;
}

function toRelationship(item: Record<string, AttributeValue>): PartnerPatientRelationship {
  const { pk: _pk, sk: _sk, kind: _kind, ...rest } = unmarshall(item);
  return rest as PartnerPatientRelationship;
}

/** The relationship of one partner with one patient (ended ones too), or undefined. One GetItem. */
export async function readRelationship(store: RelationshipTable, partnerId: string, patientId: string): Promise<PartnerPatientRelationship | undefined> {
  const out = await awsCall('dynamodb', () =>
    store.db.send(
      new GetItemCommand({ TableName: store.table, Key: { pk: { S: patientPk(patientId) }, sk: { S: relationSk(partnerId) } }, ConsistentRead: true }),
    ),
  );
  return out.Item ? toRelationship(out.Item) : undefined;
}

/**
 * Makes (or renews) the relationship. A holding relationship is left as it is unless `replace`
 * (the operator changing purpose or until); an ended one is made anew. Answers what is stored.
 */
export async function relate(
  store: RelationshipTable,
  relationship: PartnerPatientRelationship,
  options: { replace?: boolean; now: Date },
): Promise<{ relationship: PartnerPatientRelationship; created: boolean }> {
  const existing = await readRelationship(store, relationship.partnerId, relationship.patientId);
  if (existing && relationshipHolds(existing, options.now) && !options.replace) return { relationship: existing, created: false };
  const item = marshall({ pk: patientPk(relationship.patientId), sk: relationSk(relationship.partnerId), kind: 'relationship', ...relationship });
  await awsCall('dynamodb', () => store.db.send(new PutItemCommand({ TableName: store.table, Item: item })));
  return { relationship, created: !existing || !relationshipHolds(existing, options.now) };
}

/**
 * Ends the relationship (kept, with `endedAt` / `endedBy`). Answers the ended record, or undefined
 * when there was none holding.
 */
export async function unrelate(
  store: RelationshipTable,
  partnerId: string,
  patientId: string,
  endedBy: string,
  now: Date,
): Promise<PartnerPatientRelationship | undefined> {
  const existing = await readRelationship(store, partnerId, patientId);
  if (!existing || existing.endedAt !== undefined) return undefined;
  const ended: PartnerPatientRelationship = { ...existing, endedAt: now.toISOString(), endedBy };
  try {
    await awsCall('dynamodb', () =>
      store.db.send(
        new PutItemCommand({
          TableName: store.table,
          Item: marshall({ pk: patientPk(patientId), sk: relationSk(partnerId), kind: 'relationship', ...ended }),
          ConditionExpression: 'attribute_exists(pk) AND attribute_not_exists(endedAt)',
        }),
      ),
    );
  } catch (error) {
    if (isConditionalCheckFailed(error)) return undefined;
    throw error;
  }
  return ended;
}

/** Every relationship of a patient (ended ones too), by partner id. One Query. */
export async function patientRelationships(store: RelationshipTable, patientId: string): Promise<PartnerPatientRelationship[]> {
  const out: PartnerPatientRelationship[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await awsCall('dynamodb', () =>
      store.db.send(
        new QueryCommand({
          TableName: store.table,
          KeyConditionExpression: 'pk = :pk AND begins_with(sk, :prefix)',
          ExpressionAttributeValues: { ':pk': { S: patientPk(patientId) }, ':prefix': { S: RELATION_SK_PREFIX } },
          ExclusiveStartKey: start,
        }),
      ),
    );
    out.push(...(page.Items ?? []).map(toRelationship));
    start = page.LastEvaluatedKey;
  } while (start);
  return out;
}

/** Every relationship of a partner (ended ones too): a paged Scan, for operator commands only. */
export async function partnerRelationships(store: RelationshipTable, partnerId: string): Promise<PartnerPatientRelationship[]> {
  const out: PartnerPatientRelationship[] = [];
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await awsCall('dynamodb', () =>
      store.db.send(
        new ScanCommand({
          TableName: store.table,
          FilterExpression: 'sk = :sk',
          ExpressionAttributeValues: { ':sk': { S: relationSk(partnerId) } },
          ExclusiveStartKey: start,
        }),
      ),
    );
    out.push(...(page.Items ?? []).map(toRelationship));
    start = page.LastEvaluatedKey;
  } while (start);
  return out.sort((a, b) => a.patientId.localeCompare(b.patientId));
}
