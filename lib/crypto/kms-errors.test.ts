import { KMSServiceException } from '@aws-sdk/client-kms';
import { EnvelopeDecryptError, KeyServiceError, KeyServiceUnavailableError } from './errors';
import { isTransientAwsError } from '../aws/dependency-calls';
import { errorCode, mapKmsError } from './kms-errors';

const aws = (name: string, httpStatusCode: number, fault: 'client' | 'server' = 'client') =>
  new KMSServiceException({ name, $fault: fault, $metadata: { httpStatusCode }, message: `${name} message` });

const netError = (code: string) => Object.assign(new Error(`connect ${code} 127.0.0.1:4599`), { code });

describe('KMS error mapping', () => {
  it.each([
    ['ThrottlingException', aws('ThrottlingException', 400)],
    ['KMSInternalException', aws('KMSInternalException', 500, 'server')],
    ['DependencyTimeoutException', aws('DependencyTimeoutException', 503, 'server')],
    ['SomethingNew', aws('SomethingNew', 502, 'server')],
    ['TooManyRequests', aws('TooManyRequests', 429)],
    ['ECONNREFUSED', netError('ECONNREFUSED')],
    ['ETIMEDOUT', netError('ETIMEDOUT')],
    ['ECONNRESET', new Error('AWS SDK error wrapper for Error: read ECONNRESET')],
    ['TimeoutError', Object.assign(new Error('timed out'), { name: 'TimeoutError' })],
  ])('%s is transient -> KeyServiceUnavailableError', (code, err) => {
    expect(isTransientAwsError(err)).toBe(true);
    const mapped = mapKmsError('GenerateDataKey', err);
    expect(mapped).toBeInstanceOf(KeyServiceUnavailableError);
    expect(mapped).toMatchObject({ operation: 'GenerateDataKey', code, cause: err });
    expect(mapped.message).toBe(`key service unavailable during GenerateDataKey (${code})`);
  });

  it.each(['AccessDeniedException', 'NotFoundException', 'DisabledException', 'KMSInvalidStateException', 'ValidationException'])(
    '%s is a lasting refusal -> KeyServiceError',
    (name) => {
      const mapped = mapKmsError('GenerateDataKey', aws(name, 400));
      expect(mapped).toBeInstanceOf(KeyServiceError);
      expect(mapped).toMatchObject({ name: 'KeyServiceError', code: name });
    },
  );

  it('Decrypt refusals of the ciphertext -> EnvelopeDecryptError(data-key-rejected)', () => {
    for (const name of ['InvalidCiphertextException', 'IncorrectKeyException']) {
      const mapped = mapKmsError('Decrypt', aws(name, 400));
      expect(mapped).toBeInstanceOf(EnvelopeDecryptError);
      expect((mapped as EnvelopeDecryptError).reason).toBe('data-key-rejected');
    }
    expect(mapKmsError('Encrypt', aws('InvalidCiphertextException', 400))).toBeInstanceOf(KeyServiceError);
  });

  it('error codes are short identifiers, never free text', () => {
    expect(errorCode(new Error('Jane Doe'))).toBe('Unknown');
    expect(errorCode(Object.assign(new Error('x'), { name: 'has spaces in it' }))).toBe('Unknown');
    expect(errorCode('ThrottlingException')).toBe('Unknown');
    expect(errorCode(undefined)).toBe('Unknown');
    expect(mapKmsError('Decrypt', new Error('MRN-123')).message).not.toContain('MRN-123');
  });
});
