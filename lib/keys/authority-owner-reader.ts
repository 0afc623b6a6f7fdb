/**
 * Who owns an assigning authority (HL7 CX-4, a FHIR Identifier.system): one consistent GetItem on the
 * authority's claim item in the keys table. The read of ApiKeyStore's authority claims on its own, for
 * the intake functions that only ask this: a class is bundled whole, and ApiKeyStore carries every
 * key and partner operation (issue 31 item 5).
 */
import { GetItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { normaliseAuthority } from '../chart/identifiers';

/** claim item of an assigning authority: `{ pk, kind: 'authority', authority, partnerId, claimedAt }` */
export const authorityPk = (authority: string) => `AUTHORITY#${normaliseAuthority(authority)}`;

export class AuthorityOwnerReader {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  /** The partner that owns the authority, or undefined when none does (the authority normalised: trimmed, upper case). */
  async authorityOwner(authority: string): Promise<string | undefined> {
    const out = await this.db.send(new GetItemCommand({ TableName: this.table, Key: marshall({ pk: authorityPk(authority) }), ConsistentRead: true }));
    const owner = out.Item ? unmarshall(out.Item).partnerId : undefined;
    return typeof owner === 'string' ? owner : undefined;
  }
}
