/**
 * Encrypted parts of a result version that do not fit a DynamoDB item, in the documents bucket.
 *
 *   key   lab-results/<resultId>/<versionId>/<part>     part = report-<index> | body
 *   body  the envelope (lib/crypto envelope format v1, serializeEnvelope JSON) of the part,
 *         per-record context { recordType: lab-result-document, sender, resultId, versionId, part }
 *
 * Keys carry only the opaque HMAC-derived ids. Objects are written before the version item that
 * refers to them; a retry of the same version writes the same keys again (a fresh encryption of
 * the same plaintext under the same context), so nothing is duplicated.
 */
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { awsCall } from '../aws/dependency-calls';

const DEPENDENCY = 'documents-bucket';

export { documentKey } from './document-key';

/** Reads the parts (GetObject only: a reader's bundle carries no PutObject and no upload checksums). */
export class ResultDocumentReader {
  constructor(
    protected readonly s3: S3Client,
    protected readonly bucket: string,
  ) {}

  async get(key: string): Promise<string> {
    const out = await awsCall(DEPENDENCY, () => this.s3.send(new GetObjectCommand({ Bucket: this.bucket, Key: key })));
    if (!out.Body) throw new Error('document object has no body');
    return out.Body.transformToString('utf8');
  }
}

/** Writes the parts (PutObject only): what the writers of versions bundle (they never read a part back). */
export class ResultDocumentWriter {
  constructor(
    protected readonly s3: S3Client,
    protected readonly bucket: string,
  ) {}

  async put(key: string, envelopeJson: string): Promise<void> {
    await awsCall(DEPENDENCY, () =>
      this.s3.send(
        new PutObjectCommand({
          Bucket: this.bucket,
          Key: key,
          Body: envelopeJson,
          ContentType: 'application/json',
        }),
      ),
    );
  }
}

/** Reads the parts and writes them (ResultDocumentWriter, the one implementation of the write). */
export class ResultDocumentStore extends ResultDocumentReader {
  private readonly writer = new ResultDocumentWriter(this.s3, this.bucket);

  put(key: string, envelopeJson: string): Promise<void> {
    return this.writer.put(key, envelopeJson);
  }
}
