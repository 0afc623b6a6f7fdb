/**
 * The accounting of disclosures (HIPAA 45 CFR 164.528): one record per patient whose records a
 * successful export or FHIR read sent to a partner: who received it (partner, key, the staff member
 * when a person signed in), what was sent (the endpoint and the resource ids and kinds, never a value
 * of the record), the purpose of use, when, and the request id.
 *
 * Stored in the audit table (append-only: PutItem with `attribute_not_exists`, the only write a
 * function holds on it) under its own partition per patient, so that a patient's accounting over a
 * time range is one Query, with no filter, apart from the rest of the patient's audit trail:
 *
 *   pk `DISCLOSURE#<patientId>`   sk `<ISO instant>#<requestId>#<random>`
 *
 * The instant is `Date.toISOString()` (fixed width), so the sort key orders by time and a range
 * of instants is a `BETWEEN` on it (lib/disclosures/disclosure-reader.ts).
 */
import { PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import { marshall } from '../aws/attribute-values';
import { boundedResourceIds, keyPart } from '../audit/audit-trail';
import type { PurposeOfUse } from '../relationships/relationships';

/** Where the purpose of a disclosure came from. */
export type PurposeSource = 'requested' | 'relationship' | 'default';

export interface DisclosureRecord {
  /** when the answer was sent (the request's time, ISO 8601 UTC) */
  at: string;
  requestId: string;
  /** the recipient: the partner and the key it used */
  partnerId: string;
  keyId: string;
  /** the signed-in staff member, when a person rather than a key read */
  staffUsername?: string;
  /** the service's internal patient id (never an MRN or a name) */
  patientId: string;
  /** what was sent: the endpoint (function name), its audit action and the resource ids it named */
  endpoint: string;
  action: string;
  resourceIds?: Record<string, string>;
  /** HL7 v3 PurposeOfUse of the disclosure, and whether the request named it or it was the default */
  purposeOfUse: PurposeOfUse;
  purposeSource: PurposeSource;
}

/** The partition of a patient's disclosures. */
export function disclosurePartition(patientId: string): string {
  return `DISCLOSURE#${keyPart(patientId)}`;
}

/** Appends disclosure records (what the HTTP functions bundle; reading is DisclosureReader's). */
export class DisclosureLog {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  async append(record: DisclosureRecord): Promise<void> {
    const sk = `${record.at}#${keyPart(record.requestId)}#${randomBytes(4).toString('hex')}`;
    const item = { ...record, ...(record.resourceIds ? { resourceIds: boundedResourceIds(record.resourceIds) } : {}) };
    await this.db.send(
      new PutItemCommand({
        TableName: this.table,
        Item: marshall({ pk: disclosurePartition(record.patientId), sk, kind: 'disclosure', ...item }, { removeUndefinedValues: true }),
        ConditionExpression: 'attribute_not_exists(pk)',
      }),
    );
  }
}
