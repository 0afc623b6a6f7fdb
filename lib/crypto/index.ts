/** Public surface of the envelope encryption layer. */
export { EnvelopeEncryptor, DEFAULT_DATA_KEY_PURPOSE, DEFAULT_DATA_KEY_SERVICE, type EncryptOptions, type EnvelopeEncryptorOptions } from './envelope';
export { ENVELOPE_ALGORITHM, ENVELOPE_VERSION, parseEnvelope, serializeEnvelope, type Envelope } from './envelope-format';
export { DEFAULT_DATA_KEY_MAX_AGE_MS, DEFAULT_DATA_KEY_MAX_USES, DEFAULT_DECRYPTED_KEY_MAX_ENTRIES } from './data-key-cache';
export { canonicalContext, contextsEqual, type EncryptionContext } from './canonical-context';
export { EnvelopeDecryptError, KeyServiceError, KeyServiceUnavailableError, type EnvelopeDecryptReason } from './errors';
