/**
 * Subscription signing secrets: 32 random bytes, shown once as `whsec_<base64>` (the Standard
 * Webhooks form), stored only as a KMS envelope bound to the subscription id.
 */
import { randomBytes } from 'node:crypto';
import type { EnvelopeEncryptor } from '../crypto/envelope';
import { serializeEnvelope } from '../crypto/envelope-format';

export const SECRET_PREFIX = 'whsec_';
export const WEBHOOK_SECRET_KEY_PURPOSE = 'webhook-secret';
const SECRET_BYTES = 32;

export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(SECRET_BYTES).toString('base64');
}

const contextFor = (subscriptionId: string) => ({ recordType: 'webhook-secret', subscriptionId });

export async function sealSigningSecret(encryptor: EnvelopeEncryptor, subscriptionId: string, secret: string): Promise<string> {
  return serializeEnvelope(await encryptor.encrypt(secret, contextFor(subscriptionId)));
}

export async function openSigningSecret(encryptor: EnvelopeEncryptor, subscriptionId: string, envelope: string): Promise<string> {
  return (await encryptor.decrypt(envelope, contextFor(subscriptionId))).toString('utf8');
}
