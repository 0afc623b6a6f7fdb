/**
 * The document numbers (TXA-12) a partner has used, and the content each last carried: the answer to
 * an MDM^T02 that reuses a number depends only on what the sender sent before, never on whether the
 * message names a chart patient (a reused number with other content is AE 205 whether the earlier
 * document was filed or held; otherwise a T02 would say which (MRN, name, birth date) is a patient).
 *
 *   chart table item   pk DOCNO#<partnerId>:<TXA-12>   sk DOCUMENT   attributes: partnerId, fingerprint, updatedAt
 *
 * `fingerprint` is a keyed hash (ResultKeys.bodyFingerprint) of the document's content as
 * same-document.ts compares it (times as instants). The pk starts with the partner: no partner
 * reaches another's numbers. A first use is a conditional put (two concurrent T02s with one number:
 * one wins, the other is 205); T08/T10 put the replacement's content unconditionally (filed or held alike).
 * Numbers used before this register existed are not in it: their first T02 afterwards registers them,
 * and a chart note with other content under the number is held for review (never a 205 that would
 * depend on the patient).
 */
import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { awsCall, isConditionalCheckFailed } from '../aws/dependency-calls';

const DEPENDENCY = 'chart-table';
const SK = 'DOCUMENT';

/** What a T02's document number is to the register: first use, the same content again, or other content. */
export type DocumentNumberUse = 'new' | 'same' | 'different';

export class DocumentNumberRegister {
  constructor(
    private readonly db: DynamoDBClient,
    private readonly table: string,
  ) {}

  private key(partnerId: string, documentNumber: string) {
    return { pk: { S: `DOCNO#${partnerId}:${documentNumber}` }, sk: { S: SK } };
  }

  private async read(partnerId: string, documentNumber: string): Promise<string | undefined> {
    const out = await awsCall(DEPENDENCY, () =>
      this.db.send(new GetItemCommand({ TableName: this.table, Key: this.key(partnerId, documentNumber), ConsistentRead: true })),
    );
    return out.Item?.fingerprint?.S;
  }

  /** A T02: registers the number with this content when unused; otherwise says whether the content is the one registered. */
  async claim(partnerId: string, documentNumber: string, fingerprint: string, now: Date): Promise<DocumentNumberUse> {
    const registered = await this.read(partnerId, documentNumber);
    if (registered !== undefined) return registered === fingerprint ? 'same' : 'different';
    try {
      await awsCall(DEPENDENCY, () =>
        this.db.send(
          new PutItemCommand({
            TableName: this.table,
            Item: { ...this.key(partnerId, documentNumber), partnerId: { S: partnerId }, fingerprint: { S: fingerprint }, updatedAt: { S: now.toISOString() } },
            ConditionExpression: 'attribute_not_exists(pk)',
          }),
        ),
      );
      return 'new';
    } catch (error) {
      if (!isConditionalCheckFailed(error)) throw error;
      return (await this.read(partnerId, documentNumber)) === fingerprint ? 'same' : 'different';
    }
  }

  /** A T08/T10: the number now carries this content (whether the replacement was filed or held). */
  async replace(partnerId: string, documentNumber: string, fingerprint: string, now: Date): Promise<void> {
    await awsCall(DEPENDENCY, () =>
      this.db.send(
        new PutItemCommand({
          TableName: this.table,
          Item: { ...this.key(partnerId, documentNumber), partnerId: { S: partnerId }, fingerprint: { S: fingerprint }, updatedAt: { S: now.toISOString() } },
        }),
      ),
    );
  }
}
