/**
 * Identity claims: each identity a partner writes under has at most one owner. Three kinds, one
 * claim item each in the keys table, all written the same way (one conditional PutItem
 * `attribute_not_exists(pk) OR partnerId = :p`; dynalite has no TransactWriteItems):
 *
 *   kind        pk                     what it is                        intake compares
 *   authority   AUTHORITY#<AUTHORITY>  HL7 CX-4 / FHIR Identifier.system trimmed, upper case
 *   sender      SENDER#<SENDER ID>     MSH-4, JSON senderID, meta.source exactly (result id = senderID, accession, code)
 *   formSource  FORMSOURCE#<SOURCE>    a form packet's sourceSystemId    exactly
 *
 * The claim key is the id trimmed and upper-cased for every kind. Intake compares sender ids and
 * form sources exactly, so two spellings it treats as the same id are the same claim; the claim is
 * stricter still: `demo-lab` and `DEMO-LAB` cannot belong to two partners either (look-alike
 * senders in staff views). Only the operator CLI (lib/admin/partner-admin.ts) and the local
 * stack's demo seeding write claims; no request path reads sender or form source claims (the
 * partner's own lists are what intake checks, and a list entry is only written after its claim).
 * A separate class from ApiKeyStore so the authorizer's and intake's bundles do not carry it.
 */
import { DeleteItemCommand, GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { marshall, unmarshall } from '../aws/attribute-values';
import { scanKeysTableKinds } from './keys-table-scan';
import { normaliseAuthority } from '../chart/identifiers';
import type { PartnerRecord } from './api-key';

export type IdentityKind = 'authority' | 'sender' | 'formSource';

export interface IdentityNamespace {
  kind: IdentityKind;
  /** claim item pk prefix */
  prefix: string;
  /** item attribute holding the claim key (`authority` for authorities, as claims written before sender ids had owners) */
  attribute: string;
  /** how messages name one: "sender id DEMO-LAB-LIS" */
  label: string;
  /** the `npm run partners` option that lists them */
  option: string;
  /** the partner's list of them */
  listed(partner: PartnerRecord): readonly string[];
}

export const IDENTITY_KINDS: readonly IdentityKind[] = ['authority', 'sender', 'formSource'];

export const IdentityNamespaces: Readonly<Record<IdentityKind, IdentityNamespace>> = {
  authority: {
    kind: 'authority',
    prefix: 'AUTHORITY#',
    attribute: 'authority',
    label: 'assigning authority',
    option: 'assigning-authority',
    listed: (p) => p.assigningAuthorities ?? [],
  },
  sender: { kind: 'sender', prefix: 'SENDER#', attribute: 'senderId', label: 'sender id', option: 'sender-id', listed: (p) => p.allowedSenderIds ?? [] },
  formSource: {
    kind: 'formSource',
    prefix: 'FORMSOURCE#',
    attribute: 'formSourceId',
    label: 'form source',
    option: 'form-source',
    listed: (p) => p.allowedFormSourceIds ?? [],
  },
};

/** The wildcard a partner list may hold ("any"): never claimable, ownership is exclusive. */
export const WILDCARD_ID = '*';

/** The claim key of an id of any kind: trimmed, upper case (authorities: normaliseAuthority, the same). */
export const identityClaimKey = (id: string): string => normaliseAuthority(id);

/** The claim keys of a partner's list of one kind, without the wildcard and duplicates, in list order. */
export function identityClaimKeys(ids: readonly string[]): string[] {
  return [...new Set(ids.filter((id) => id.trim() !== WILDCARD_ID).map(identityClaimKey))].filter((k) => k !== '');
}

/** A claim attempt: `claimed` (`created`: the claim item is new) or refused because `owner` holds it. */
export type IdentityClaimAttempt = { claimed: true; created: boolean } | { claimed: false; owner: string | undefined };

export interface IdentityClaim {
  kind: IdentityKind;
  /** the claim key (trimmed, upper case) */
  id: string;
  partnerId: string;
}

const conditionFailed = (error: unknown) => (error as Error).name === 'ConditionalCheckFailedException';

/** Claim items of every kind in the keys table (administrative: the operator CLI and the local stack). */
export class IdentityClaimStore {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  private pk(kind: IdentityKind, id: string): string {
    return `${IdentityNamespaces[kind].prefix}${identityClaimKey(id)}`;
  }

  /** The partner holding the claim, or undefined when none does (one consistent GetItem). */
  async owner(kind: IdentityKind, id: string): Promise<string | undefined> {
    const out = await this.db.send(new GetItemCommand({ TableName: this.table, Key: marshall({ pk: this.pk(kind, id) }), ConsistentRead: true }));
    const owner = out.Item ? unmarshall(out.Item).partnerId : undefined;
    return typeof owner === 'string' ? owner : undefined;
  }

  /**
   * Claims the id for the partner: one conditional PutItem. Claiming one the partner holds already
   * succeeds (`created: false`); one another partner holds is refused with its owner. Does not
   * check the wildcard or the chart's own authority (PartnerAdmin refuses them).
   */
  async claim(kind: IdentityKind, id: string, partnerId: string, at: Date): Promise<IdentityClaimAttempt> {
    const namespace = IdentityNamespaces[kind];
    const key = identityClaimKey(id);
    try {
      const out = await this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: marshall({ pk: this.pk(kind, key), kind, [namespace.attribute]: key, partnerId, claimedAt: at.toISOString() }),
          ConditionExpression: 'attribute_not_exists(pk) OR partnerId = :p',
          ExpressionAttributeValues: marshall({ ':p': partnerId }),
          ReturnValues: 'ALL_OLD',
        }),
      );
      return { claimed: true, created: !out.Attributes };
    } catch (error) {
      if (conditionFailed(error)) return { claimed: false, owner: await this.owner(kind, key) };
      throw error;
    }
  }

  /** Deletes the partner's claim on the id, only if that partner holds it (false otherwise). */
  async release(kind: IdentityKind, id: string, partnerId: string): Promise<boolean> {
    try {
      await this.db.send(
        new DeleteItemCommand({
          TableName: this.table,
          Key: marshall({ pk: this.pk(kind, id) }),
          ConditionExpression: 'partnerId = :p',
          ExpressionAttributeValues: marshall({ ':p': partnerId }),
        }),
      );
      return true;
    } catch (error) {
      if (conditionFailed(error)) return false;
      throw error;
    }
  }

  /** Every claim of every kind (a scan: the keys table is small; CLI only), by kind then id. */
  async list(): Promise<IdentityClaim[]> {
    const claims: IdentityClaim[] = [];
    for (const item of await scanKeysTableKinds(this.db, this.table, IDENTITY_KINDS)) {
      const record = unmarshall(item) as Record<string, unknown> & { kind: IdentityKind; partnerId: string };
      const id = record[IdentityNamespaces[record.kind].attribute];
      if (typeof id === 'string') claims.push({ kind: record.kind, id, partnerId: record.partnerId });
    }
    return claims.sort((a, b) => IDENTITY_KINDS.indexOf(a.kind) - IDENTITY_KINDS.indexOf(b.kind) || a.id.localeCompare(b.id));
  }
}
