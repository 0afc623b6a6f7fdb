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
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { runWebhooksCli } from '../lib/webhooks/cli';

useLocalStackEnvironment();
runWebhooksCli(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (error: Error) => {
    process.stderr.write(`${error.name}: ${error.message.split('\n')[0]}\n`);
    process.exit(1);
  },
);
