/** What the deliveries worker needs, wired from the environment (DynamoDB, KMS Decrypt, S3 reads for the audience rule; SQS is in delivery-queue.ts). */
import { kmsClient } from '../aws/clients';
import { ContainerCache } from '../aws/container-cache';
import { optionalEnv } from '../aws/environment';
import { Env } from '../config/service';
import { EnvelopeEncryptor } from '../crypto/envelope';
import { audienceSource } from './audience-wiring';
import type { DeliveryDependencies } from './delivery';
import { DEFAULT_TIMEOUT_MS, postWebhook } from './http-delivery';
import { retryScaleOf } from './retry-schedule';
import { openSigningSecret, WEBHOOK_SECRET_KEY_PURPOSE } from './signing-secret';
import { webhookStore } from './store-wiring';

const encryptors = new ContainerCache<EnvelopeEncryptor>();

export function webhookSecretEncryptor(): EnvelopeEncryptor {
  return encryptors.get(
    [kmsClient(), optionalEnv(Env.kmsKeyId, 'unset') || 'unset'],
    ([kms, keyId]) => new EnvelopeEncryptor({ kms, keyId, purpose: WEBHOOK_SECRET_KEY_PURPOSE }),
  );
}

function timeoutMs(): number {
  const n = Number(process.env[Env.webhookTimeoutMs]);
  return Number.isInteger(n) && n > 0 && n <= DEFAULT_TIMEOUT_MS ? n : DEFAULT_TIMEOUT_MS;
}

/** Called once per worker invocation: the audience rule's standing reads are memoised for that batch only. */
export function deliveryDependencies(): DeliveryDependencies {
  const encryptor = webhookSecretEncryptor();
  return {
    store: webhookStore(),
    audience: audienceSource(),
    openSecret: (subscriptionId, envelope) => openSigningSecret(encryptor, subscriptionId, envelope),
    post: postWebhook,
    stage: optionalEnv(Env.stage, 'unknown'),
    timeoutMs: timeoutMs(),
    retryScale: retryScaleOf(process.env[Env.webhookRetryScale]),
    random: Math.random,
    now: () => new Date(),
  };
}
