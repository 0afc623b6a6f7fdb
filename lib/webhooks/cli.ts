/** The commands of `npm run webhooks` (scripts/webhooks.ts); see there for usage. */
import { parseArgs } from 'node:util';
import { dynamoDbClient } from '../aws/clients';
import { optionalEnv } from '../aws/environment';
import { Env, Scopes, type Scope } from '../config/service';
import { tableName } from '../dynamo/table-names';
import { ApiKeyStore } from '../keys/api-key-store';
import { webhookSecretEncryptor } from './delivery-wiring';
import {
  addSubscription,
  redeliver,
  removeSubscription,
  sendPing,
  setSubscriptionEnabled,
  SubscriptionInputError,
  type ManagementDependencies,
} from './management';
import { enqueueDelivery } from './delivery-queue';
import { webhookStore } from './store-wiring';

/** A partner holding one of these may read every chart result, so its subscriptions hear of all of them. */
const EXPORT_SCOPES: readonly Scope[] = [Scopes.exportHl7, Scopes.exportFhir];

const USAGE =
  'usage: npm run webhooks -- add --partner ID --url URL --events lab-result.saved | list [--partner ID] | disable|enable|remove SUB_ID | test SUB_ID | redeliver DELIVERY_ID | deliveries SUB_ID [--limit N]';

export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

const processOutput: CliOutput = { out: (line) => process.stdout.write(line + '\n'), err: (line) => process.stderr.write(line + '\n') };

/** Runs one command against the environment's stage; returns the exit code (2 = bad input). */
export async function runWebhooksCli(argv: string[], io: CliOutput = processOutput): Promise<number> {
  const out = io.out;
  const [command, ...rest] = argv;
  let parsed;
  try {
    parsed = parseArgs({
      args: rest,
      allowPositionals: true,
      options: { partner: { type: 'string' }, url: { type: 'string' }, events: { type: 'string' }, limit: { type: 'string' }, wait: { type: 'string' } },
    });
  } catch (error) {
    io.err((error as Error).message.split('\n')[0]!);
    return 2;
  }
  const { values, positionals } = parsed;
  const keys = new ApiKeyStore(dynamoDbClient(), tableName('keys'));
  const services: ManagementDependencies = {
    store: webhookStore(),
    partnerExists: async (id) => (await keys.getPartner(id)) !== undefined,
    partnerHoldsExportScope: async (id) => {
      const now = new Date().toISOString();
      return (await keys.listKeys()).some(
        (k) => k.partnerId === id && k.status === 'active' && (!k.expiresAt || k.expiresAt > now) && k.scopes.some((s) => EXPORT_SCOPES.includes(s)),
      );
    },
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
        out(
          subscription.exportScope
            ? "the partner holds an export scope: events of every partner's results"
            : "the partner holds no export scope: events of the partner's own results only",
        );
        out(`signing secret (shown once): ${secret}`);
        return 0;
      }
      case 'list': {
        for (const s of await services.store.listSubscriptions(values.partner)) {
          out(
            `${s.subscriptionId}\t${s.enabled ? 'enabled' : `disabled(${s.disabledReason ?? 'operator'})`}\t${s.partnerId}\t${s.exportScope ? 'all-results' : 'own-results'}\t${s.events.join(',')}\t${s.url}\t${s.createdAt}`,
          );
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
            out(
              `  #${a.attempt}\t${a.at}\t${a.httpStatus ?? a.errorName ?? '-'}\t${a.latencyMs} ms\t${a.outcome}${a.nextAttemptAt ? `\tnext ${a.nextAttemptAt}` : ''}`,
            );
          }
        }
        return 0;
      }
      default:
        io.err(USAGE);
        return 2;
    }
  } catch (error) {
    if (error instanceof SubscriptionInputError) {
      io.err(error.message);
      return 2;
    }
    throw error;
  }
}
