/**
 * A partner's own view of a person (docs/write-authority.md): what its ADT messages said, kept beside
 * the chart and never written into it. One item per (partner, assigning authority, MRN):
 *
 *   chart table item   pk SRCID#<partnerId>#<keyed hash of authority + MRN>   sk IDENTITY
 *                      attributes: partnerId, linkedPatientId?, linkedBy? (matched | staff), record (map)
 *
 * The key starts with the partner, so no other partner can reach the item. Writes are conditional on
 * the owner (`partnerId = :partnerId`) and never drop a staff link: a later ADT of the same partner
 * replaces the demographics it sent (and its visit, diagnoses, allergies: lib/intake/adt-content.ts), the link stays unless the new demographics no longer agree and
 * the link was made by matching (then it is cleared and the identity held again).
 */
import { GetItemCommand, PutItemCommand, UpdateItemCommand, type DynamoDBClient, type PutItemCommandInput } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';
import { DependencyUnavailableError } from '../domain-errors';
import type { PartnerAllergy, PartnerDiagnosis, PartnerVisit, Patient, Provenance } from '../chart/types';

export type IdentityLink = 'matched' | 'staff';

/** The demographics a partner sent: a Patient without the chart's id. */
export type PartnerDemographics = Omit<Patient, 'patientId'>;

export interface PartnerIdentity {
  identityKey: string;
  partnerId: string;
  demographics: PartnerDemographics;
  /** PV1 of its ADT messages, one per visit number (lib/intake/adt-content.ts) */
  visits?: PartnerVisit[];
  /** DG1 of its latest ADT that carried any */
  diagnoses?: PartnerDiagnosis[];
  /** AL1 of its latest ADT that carried any */
  allergies?: PartnerAllergy[];
  provenance: Provenance;
  linkedPatientId?: string;
  linkedBy?: IdentityLink;
  /** a staff link: the name and birth date of the person as staff saw them when linking (later messages must agree with these or the chart) */
  linkedPerson?: Pick<PartnerDemographics, 'name' | 'birthDate'>;
  /** a staff link: who made it, and when */
  linkedByUser?: string;
  linkedAt?: string;
}

const DEPENDENCY = 'chart-table';
const SK = 'IDENTITY';

/** The item key of a partner identity; `identityKey` = `<partnerId>#<keyed hash>`. */
export function identityKeyOf(partnerId: string, identifierKey: string): string {
  return `${partnerId}#${identifierKey}`;
}

export class PartnerIdentityStore {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  private key(identityKey: string) {
    return { pk: { S: `SRCID#${identityKey}` }, sk: { S: SK } };
  }

  async get(identityKey: string): Promise<PartnerIdentity | undefined> {
    const out = await awsCall(DEPENDENCY, () => this.db.send(new GetItemCommand({ TableName: this.table, Key: this.key(identityKey), ConsistentRead: true })));
    return out.Item ? (unmarshall(out.Item).record as PartnerIdentity) : undefined;
  }

  /**
   * Writes the partner's identity (its latest demographics and provenance) with the link decided by
   * the caller; only the owning partner's item is ever written. `previous` is the item as the caller
   * read it (one read per message): a staff link on it is kept whatever the caller decided, and the
   * write is conditional on the link being still what was read, so a staff link made meanwhile is
   * never dropped (the message is then answered as a retryable failure). Returns the identity as stored.
   */
  async put(identity: PartnerIdentity, previous: PartnerIdentity | undefined): Promise<PartnerIdentity> {
    if (previous && previous.partnerId !== identity.partnerId) throw new Error('partner identity owned by another partner'); // unreachable: the key holds the partner
    const stored: PartnerIdentity =
      previous?.linkedBy === 'staff'
        ? {
            ...identity,
            linkedPatientId: previous.linkedPatientId,
            linkedBy: 'staff',
            ...(previous.linkedPerson ? { linkedPerson: previous.linkedPerson } : {}),
            ...(previous.linkedByUser ? { linkedByUser: previous.linkedByUser } : {}),
            ...(previous.linkedAt ? { linkedAt: previous.linkedAt } : {}),
          }
        : identity;
    const condition: Pick<PutItemCommandInput, 'ConditionExpression' | 'ExpressionAttributeNames' | 'ExpressionAttributeValues'> = !previous
      ? { ConditionExpression: 'attribute_not_exists(pk)' }
      : previous.linkedBy
        ? {
            ConditionExpression: 'partnerId = :partnerId AND #record.#linkedBy = :linkedBy',
            ExpressionAttributeNames: { '#record': 'record', '#linkedBy': 'linkedBy' },
            ExpressionAttributeValues: { ':partnerId': { S: identity.partnerId }, ':linkedBy': { S: previous.linkedBy } },
          }
        : {
            ConditionExpression: 'partnerId = :partnerId AND attribute_not_exists(#record.#linkedBy)',
            ExpressionAttributeNames: { '#record': 'record', '#linkedBy': 'linkedBy' },
            ExpressionAttributeValues: { ':partnerId': { S: identity.partnerId } },
          };
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: { ...this.key(identity.identityKey), ...marshall({ partnerId: identity.partnerId, record: stored }, { removeUndefinedValues: true }) },
            ...condition,
          }),
        ),
      );
    } catch (error) {
      // another write came between the read and this one (a staff link, a concurrent ADT): the sender retries
      if (isConditionalCheckFailed(error)) throw new DependencyUnavailableError(DEPENDENCY);
      throw error;
    }
    return stored;
  }

  /**
   * A staff member links the identity to a chart patient, recording the person as they saw it (the
   * identity's name and birth date now), who linked and when. False when there is no such identity.
   */
  async linkByStaff(identityKey: string, patientId: string, by: { username: string; at: Date }): Promise<boolean> {
    const identity = await this.get(identityKey);
    if (!identity) return false;
    const linkedPerson = marshall(
      { person: { name: identity.demographics.name, ...(identity.demographics.birthDate ? { birthDate: identity.demographics.birthDate } : {}) } },
      { removeUndefinedValues: true },
    ).person!;
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: this.key(identityKey),
            UpdateExpression:
              'SET #record.linkedPatientId = :p, #record.linkedBy = :staff, #record.linkedPerson = :person, #record.linkedByUser = :by, #record.linkedAt = :at',
            ConditionExpression: 'attribute_exists(pk)',
            ExpressionAttributeNames: { '#record': 'record' },
            ExpressionAttributeValues: {
              ':p': { S: patientId },
              ':staff': { S: 'staff' },
              ':person': linkedPerson,
              ':by': { S: by.username },
              ':at': { S: by.at.toISOString() },
            },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }

  /**
   * Ends a staff link to `patientId` (the identity's later messages resolve again as if never linked:
   * the chart's MRN index, else held). False when the identity is not linked by staff to that patient.
   */
  async unlinkByStaff(identityKey: string, patientId: string): Promise<boolean> {
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new UpdateItemCommand({
            TableName: this.table,
            Key: this.key(identityKey),
            UpdateExpression: 'REMOVE #record.linkedPatientId, #record.linkedBy, #record.linkedPerson, #record.linkedByUser, #record.linkedAt',
            ConditionExpression: 'attribute_exists(pk) AND #record.linkedPatientId = :p AND #record.linkedBy = :staff',
            ExpressionAttributeNames: { '#record': 'record' },
            ExpressionAttributeValues: { ':p': { S: patientId }, ':staff': { S: 'staff' } },
          }),
        ),
      );
      return true;
    } catch (error) {
      if (isConditionalCheckFailed(error)) return false;
      throw error;
    }
  }
}
