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
 * Wrong usage: one line on stderr, exit code 2; a refusal (unknown partner, no such subscription): exit 1.
 */
import { runMain, type CliIo } from '../lib/admin/cli-runner';
import { useLocalStackEnvironment } from '../lib/local/endpoints-file';
import { runWebhooksCli } from '../lib/webhooks/cli';

export function main(argv: string[], io: CliIo): Promise<number> {
  return runWebhooksCli(argv, { out: (line) => io.out(line + '\n'), err: (line) => io.err(line + '\n') }, useLocalStackEnvironment);
}

if (require.main === module) runMain('webhooks', main);
