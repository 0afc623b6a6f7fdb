/** What the deliveries worker needs, wired from the environment (DynamoDB, KMS Decrypt; SQS is in queue-services). */
import { kmsClient } from '../aws/clients';
import { optionalEnv } from '../aws/environment';
import { Env } from '../config/service';
import { EnvelopeEncryptor } from '../crypto/envelope';
import type { DeliveryServices } from './delivery';
import { DEFAULT_TIMEOUT_MS, postWebhook } from './http-delivery';
import { retryScaleOf } from './retry-schedule';
import { openSigningSecret, WEBHOOK_SECRET_KEY_PURPOSE } from './signing-secret';
import { webhookStore } from './store-services';

let cached: { kms: unknown; keyId: string; encryptor: EnvelopeEncryptor } | undefined;

export function webhookSecretEncryptor(): EnvelopeEncryptor {
  const kms = kmsClient();
  const keyId = optionalEnv(Env.kmsKeyId, 'unset') || 'unset';
  if (!cached || cached.kms !== kms || cached.keyId !== keyId)
    cached = { kms, keyId, encryptor: new EnvelopeEncryptor({ kms, keyId, purpose: WEBHOOK_SECRET_KEY_PURPOSE }) };
  return cached.encryptor;
}

function timeoutMs(): number {
  const n = Number(process.env[Env.webhookTimeoutMs]);
  return Number.isInteger(n) && n > 0 && n <= DEFAULT_TIMEOUT_MS ? n : DEFAULT_TIMEOUT_MS;
}

export function deliveryServices(): DeliveryServices {
  const encryptor = webhookSecretEncryptor();
  return {
    store: webhookStore(),
    openSecret: (subscriptionId, envelope) => openSigningSecret(encryptor, subscriptionId, envelope),
    post: postWebhook,
    stage: optionalEnv(Env.stage, 'unknown'),
    timeoutMs: timeoutMs(),
    retryScale: retryScaleOf(process.env[Env.webhookRetryScale]),
    random: Math.random,
    now: () => new Date(),
  };
}
