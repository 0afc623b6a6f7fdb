/** The commands of `npm run webhooks` (scripts/webhooks.ts); `npm run webhooks -- --help` lists them. */
import { readToolCommand, UsageError, wholeNumber, type CommandSpec, type ParsedCommand } from '../admin/cli-options';
import { runCli, type CliIo } from '../admin/cli-runner';
import { AdminError } from '../admin/key-admin';
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

const TARGET_NOTE =
  'Target: the running local stack (.local/endpoints.json), or a deployed stage from the environment (WEBHOOKS_TABLE, WEBHOOK_DELIVERIES_QUEUE_URL, KMS_KEY_ID, STAGE and the usual AWS credentials).';

const id = (name: string) => ({ name, args: '<subscriptionId>', options: {} });
export const WEBHOOKS_TOOL: { name: string; summary: string; commands: CommandSpec[]; footer: string[] } = {
  name: 'webhooks',
  summary: 'Webhook subscriptions and their delivery log.',
  footer: [TARGET_NOTE, 'Exit codes: 0 done, 1 refused or failed (one line), 2 wrong usage.'],
  commands: [
    {
      name: 'add',
      summary: 'subscribe a partner URL to events; prints the signing secret once',
      options: {
        partner: { type: 'string', value: 'ID', description: 'the partner (required)' },
        url: { type: 'string', value: 'URL', description: 'where to deliver: https:// (http://127.0.0.1 on the local stack) (required)' },
        events: { type: 'string', value: 'TYPES', description: 'comma-separated event types, e.g. lab-result.saved (required)' },
      },
      examples: ['npm run webhooks -- add --partner demo-ehr --url https://partner.example/hooks --events lab-result.saved'],
    },
    {
      name: 'list',
      summary: 'the subscriptions, one line each',
      options: { partner: { type: 'string', value: 'ID', description: "only this partner's" } },
      examples: ['npm run webhooks -- list', 'npm run webhooks -- list --partner demo-ehr'],
    },
    { ...id('disable'), summary: 'stop deliveries to a subscription', examples: ['npm run webhooks -- disable wh_0123abcd'] },
    { ...id('enable'), summary: 'resume deliveries to a subscription', examples: ['npm run webhooks -- enable wh_0123abcd'] },
    { ...id('remove'), summary: 'delete a subscription (its delivery log expires after 30 days)', examples: ['npm run webhooks -- remove wh_0123abcd'] },
    {
      ...id('test'),
      summary: 'queue a ping event and wait for its outcome',
      options: { wait: { type: 'string', value: 'SECONDS', description: 'how long to wait for the outcome (default 15; 0: do not wait)' } },
      examples: ['npm run webhooks -- test wh_0123abcd', 'npm run webhooks -- test wh_0123abcd --wait 0'],
    },
    {
      name: 'redeliver',
      args: '<deliveryId>',
      summary: 'send a delivery again (same event and webhook-id, fresh retry schedule)',
      options: {},
      examples: ['npm run webhooks -- redeliver dl_0123abcd'],
    },
    {
      ...id('deliveries'),
      summary: "a subscription's recent deliveries and their attempts",
      options: { limit: { type: 'string', value: 'N', description: 'how many deliveries, 1-100 (default 20)' } },
      examples: ['npm run webhooks -- deliveries wh_0123abcd --limit 5'],
    },
  ],
};

export interface CliOutput {
  out(line: string): void;
  err(line: string): void;
}

const processOutput: CliOutput = { out: (line) => process.stdout.write(line + '\n'), err: (line) => process.stderr.write(line + '\n') };

/**
 * Runs one command; returns the exit code (0 done, 1 refused or failed, 2 wrong usage).
 * `useLocalEnvironment` points the process at the local stack unless the environment names a
 * stage (scripts/webhooks.ts passes lib/local's reader; lib/ may not import the local stack).
 */
export async function runWebhooksCli(argv: string[], io: CliOutput = processOutput, useLocalEnvironment: () => void = () => undefined): Promise<number> {
  // runCli's output is whole lines with their newline; CliOutput takes lines without
  const lines: CliIo = { out: (t) => io.out(t.replace(/\n$/, '')), err: (t) => io.err(t.replace(/\n$/, '')) };
  return runCli('webhooks', lines, async () => {
    const read = readToolCommand(WEBHOOKS_TOOL, argv, lines);
    if ('exitCode' in read) return read.exitCode;
    try {
      return await runCommand(read.command, read, io, useLocalEnvironment);
    } catch (error) {
      // a refusal of the input (unknown partner, no such subscription, a URL not allowed): one line, exit 1
      if (error instanceof SubscriptionInputError) throw new AdminError(error.message);
      throw error;
    }
  });
}

async function runCommand(command: string, { values, positionals }: ParsedCommand, io: CliOutput, useLocalEnvironment: () => void): Promise<number> {
  const out = io.out;
  const spec = WEBHOOKS_TOOL.commands.find((c) => c.name === command)!;
  if (spec.args && positionals.length !== 1) throw new UsageError(`${command}: give one ${spec.args}`);
  if (!spec.args && positionals.length > 0) throw new UsageError(`${command}: unexpected argument "${positionals[0]}"`);
  for (const required of command === 'add' ? ['partner', 'url', 'events'] : [])
    if (typeof values[required] !== 'string') throw new UsageError(`add: --${required} is required`);
  const limit = values.limit === undefined ? 20 : wholeNumber('limit', values.limit as string, 1, 100);
  const waitSeconds = values.wait === undefined ? 15 : wholeNumber('wait', values.wait as string, 0, 600);
  useLocalEnvironment();
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
  {
    switch (command) {
      case 'add': {
        const { subscription, secret } = await addSubscription(
          { partnerId: values.partner as string, url: values.url as string, events: values.events as string },
          services,
        );
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
        for (const s of await services.store.listSubscriptions(values.partner as string | undefined)) {
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
        const waitMs = waitSeconds * 1000;
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
        const subscriptionId = positionals[0]!;
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
        throw new UsageError(`unknown command "${command}"`);
    }
  }
}
