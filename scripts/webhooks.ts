/**
 * `npm run webhooks -- <command>`: manage webhook subscriptions and read the delivery log.
 *
 *   npm run webhooks -- add --partner demo-ehr --url https://partner.example/hooks --events lab-result.saved
 *   npm run webhooks -- list [--partner demo-ehr]
 *   npm run webhooks -- disable|enable|remove <subscriptionId>
 *   npm run webhooks -- test <subscriptionId>          (queues a ping event; waits up to 15 s for the outcome)
 *   npm run webhooks -- redeliver <deliveryId>
 *   npm run webhooks -- deliveries <subscriptionId> [--limit 20]
 *
 * Target: the running local stack (.local/endpoints.json), or the environment (WEBHOOKS_TABLE,
 * WEBHOOK_DELIVERIES_QUEUE_URL, KMS_KEY_ID, STAGE and the usual AWS credentials) for a deployed stage.
 * Bad input: one line on stderr, exit code 2.
 */
import { parseArgs } from 'node:util';
import { dynamoDbClient } from '../lib/aws/clients';
import { optionalEnv } from '../lib/aws/environment';
import { Env } from '../lib/config/service';
import { tableName } from '../lib/dynamo/table-names';
import { ApiKeyStore } from '../lib/keys/api-key-store';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { webhookSecretEncryptor } from '../lib/webhooks/delivery-services';
import { addSubscription, redeliver, removeSubscription, sendPing, setSubscriptionEnabled, SubscriptionInputError, type ManagementServices } from '../lib/webhooks/management';
import { enqueueDelivery } from '../lib/webhooks/queue-services';
import { webhookStore } from '../lib/webhooks/store-services';

const USAGE = 'usage: npm run webhooks -- add --partner ID --url URL --events lab-result.saved | list [--partner ID] | disable|enable|remove SUB_ID | test SUB_ID | redeliver DELIVERY_ID | deliveries SUB_ID [--limit N]';

const out = (line: string) => process.stdout.write(line + '\n');

async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  let parsed;
  try {
    parsed = parseArgs({ args: rest, allowPositionals: true, options: { partner: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, limit: { type: 'string' }, wait: { type: 'string' } } });
  } catch (error) {
    process.stderr.write(`${(error as Error).message.split('\n')[0]}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  useLocalStackEnvironment();
  const keys = new ApiKeyStore(dynamoDbClient(), tableName('keys'));
  const services: ManagementServices = {
    store: webhookStore(),
    partnerExists: async (id) => (await keys.getPartner(id)) !== undefined,
    encryptor: webhookSecretEncryptor(),
    enqueue: enqueueDelivery,
    stage: optionalEnv(Env.stage, 'unknown'),
    now: () => new Date(),
  };
  try {
    switch (command) {
      case 'add': {
        const { subscription, secret } = await addSubscription({ partnerId: values.partner, url: values.url, events: values.events }, services);
        out(`created ${subscription.subscriptionId} for ${subscription.partnerId} -> ${subscription.url} (${subscription.events.join(',')})`);
        out(`signing secret (shown once): ${secret}`);
        return 0;
      }
      case 'list': {
        for (const s of await services.store.listSubscriptions(values.partner)) {
          out(`${s.subscriptionId}\t${s.enabled ? 'enabled' : `disabled(${s.disabledReason ?? 'operator'})`}\t${s.partnerId}\t${s.events.join(',')}\t${s.url}\t${s.createdAt}`);
        }
        return 0;
      }
      case 'disable':
      case 'enable':
        await setSubscriptionEnabled(positionals[0], command === 'enable', services);
        out(`${command}d ${positionals[0]}`);
        return 0;
      case 'remove':
        await removeSubscription(positionals[0], services);
        out(`removed ${positionals[0]} (its delivery log expires after 30 days)`);
        return 0;
      case 'test': {
        const deliveryId = await sendPing(positionals[0], services);
        out(`queued ping ${deliveryId}`);
        const waitMs = values.wait === undefined ? 15_000 : Math.max(0, Number(values.wait) * 1000 || 0);
        const deadline = Date.now() + waitMs;
        while (Date.now() < deadline) {
          const delivery = await services.store.getDelivery(deliveryId);
          if (delivery && delivery.state !== 'pending') {
            out(`${delivery.state} after ${delivery.attempts} attempt(s), last HTTP status ${delivery.lastHttpStatus ?? '-'}`);
            return delivery.state === 'delivered' ? 0 : 1;
          }
          await new Promise((resolve) => setTimeout(resolve, 250));
        }
        if (waitMs > 0) out('no outcome yet (is the local stack running its workers?); see: npm run webhooks -- deliveries ' + positionals[0]);
        return waitMs > 0 ? 1 : 0;
      }
      case 'redeliver':
        await redeliver(positionals[0], services);
        out(`queued ${positionals[0]} again`);
        return 0;
      case 'deliveries': {
        const subscriptionId = positionals[0];
        if (!subscriptionId) throw new SubscriptionInputError('a subscription id is required');
        const limit = Math.min(100, Math.max(1, Number(values.limit ?? 20) || 20));
        for (const { delivery, attempts } of await services.store.listDeliveries(subscriptionId, limit)) {
          out(`${delivery.deliveryId}\t${delivery.eventType}\t${delivery.eventId}\t${delivery.state}\t${delivery.attempts} attempt(s)\t${delivery.createdAt}`);
          for (const a of attempts) {
            out(`  #${a.attempt}\t${a.at}\t${a.httpStatus ?? a.errorName ?? '-'}\t${a.latencyMs} ms\t${a.outcome}${a.nextAttemptAt ? `\tnext ${a.nextAttemptAt}` : ''}`);
          }
        }
        return 0;
      }
      default:
        process.stderr.write(USAGE + '\n');
        return 2;
    }
  } catch (error) {
    if (error instanceof SubscriptionInputError) {
      process.stderr.write(`${error.message}\n`);
      return 2;
    }
    throw error;
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`${error.name}: ${error.message.split('\n')[0]}\n`);
    process.exit(1);
  },
);
