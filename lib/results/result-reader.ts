/**
 * What both readers of the results table hold (LabResultSummaryReader: summaries;
 * LabResultVersionReader: whole versions): the client, the table, the decryptor and where the
 * lookup key lives. Each reader extends it on its own, so that a function reading whole versions
 * bundles none of the summary reads and the reverse (issue 31 item 5: a class is bundled whole).
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { EnvelopeDecryptor } from '../crypto/envelope-decryptor';
import { readResultKeys, type LookupKeySource, type ResultKeys } from './lookup-keys';
import type { LabResultReaderOptions } from './result-records';
import { ResultItems } from './result-items';

export class LabResultReader {
  protected readonly db: DynamoDBClient;
  protected readonly items: ResultItems;
  protected readonly table: string;
  protected readonly decryptor: EnvelopeDecryptor;
  protected readonly lookupKeys?: LookupKeySource;

  constructor(options: LabResultReaderOptions) {
    this.db = options.db;
    this.items = new ResultItems(options.db, options.table);
    this.table = options.table;
    this.decryptor = options.decryptor;
    this.lookupKeys = options.lookupKeys;
  }

  /** The lookup key's hashes (read, never created); undefined while no result was ever written. */
  protected keys(): Promise<ResultKeys | undefined> {
    if (!this.lookupKeys) throw new Error('LabResultStore needs lookupKeys for lookups by patient or accession');
    return readResultKeys(this.lookupKeys);
  }
}
