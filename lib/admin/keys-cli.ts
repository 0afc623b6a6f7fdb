/**
 * `npm run keys -- <command>`: partner API keys on the local stack or a deployed stage
 * (lib/admin/key-admin.ts does the work; this file is the command line).
 */
import { ALL_SCOPES, type Scope } from '../config/service';
import { PARTNER_TIERS, type ApiKeyRecord, type PartnerTier } from '../keys/api-key';
import { durationOption, listOption, rateLimitOption, readToolCommand, table, UsageError, type CommandSpec } from './cli-options';
import { auditTrailRecorder, operatorName } from './admin-audit';
import { runCli, type AdminCliDependencies, type CliIo } from './cli-runner';
import { KeyAdmin, keyState } from './key-admin';
import type { AdminTarget } from './target';

const stageOption = {
  type: 'string',
  value: 'NAME',
  description: 'act on a deployed stage (default: the local stack; also INTEROP_STAGE). Uses AWS_REGION and the usual AWS credentials',
} as const;
const jsonOption = { type: 'boolean', description: 'print JSON instead of text' } as const;
export const DEFAULT_OVERLAP = '24h';

export const KeyCommands: CommandSpec[] = [
  {
    name: 'create',
    summary:
      'issue a key: keys-table record, and on a stage the API Gateway key (value = SHA-256 of the secret) on the tier usage plan. Prints the secret once',
    options: {
      partner: { type: 'string', value: 'ID', description: 'partner the key belongs to (must exist: npm run partners -- create)' },
      scopes: { type: 'string', value: 'A,B', description: `scopes, comma-separated: ${ALL_SCOPES.join(', ')}` },
      tier: { type: 'string', value: PARTNER_TIERS.join('|'), description: "usage plan (default: the partner's tier)" },
      'rate-limit': {
        type: 'string',
        value: 'N/Ss',
        description: "requests per window for this key, e.g. 100/60s (default: the partner's limit)",
      },
      window: { type: 'string', value: 'S', description: 'window in seconds when --rate-limit is a bare number (default 60)' },
      label: { type: 'string', value: 'TEXT', description: 'label shown in list (default: the partner id)' },
      stage: stageOption,
      json: jsonOption,
    },
    examples: [
      'npm run keys -- create --partner acme-lab --scopes interop:ingest:results',
      'npm run keys -- create --partner acme-lab --scopes interop:ingest:results,interop:export:hl7 --rate-limit 100/60s --stage prod',
    ],
  },
  {
    name: 'list',
    summary: 'list keys (never secrets): id, state, partner, tier, scopes, rate limit, label, created',
    options: { partner: { type: 'string', value: 'ID', description: 'only this partner' }, stage: stageOption, json: jsonOption },
    examples: ['npm run keys -- list', 'npm run keys -- list --partner acme-lab --json'],
  },
  {
    name: 'revoke',
    args: '<keyId>',
    summary: 'refuse the key from the next request on; on a stage also delete its API Gateway key (safe to repeat)',
    options: { stage: stageOption },
    examples: ['npm run keys -- revoke key_0123456789ab', 'npm run keys -- revoke key_0123456789ab --stage prod'],
  },
  {
    name: 'rotate',
    args: '<keyId>',
    summary:
      'issue a new key like the old one; the old secret keeps working until the overlap ends. Run it again after a failure: it finishes the same rotation',
    options: {
      overlap: {
        type: 'string',
        value: 'DURATION',
        description: `how long the old secret still works: 24h, 30m, 90s, 7d or 0 (default ${DEFAULT_OVERLAP}, at most 30d)`,
      },
      stage: stageOption,
      json: jsonOption,
    },
    examples: ['npm run keys -- rotate key_0123456789ab', 'npm run keys -- rotate key_0123456789ab --overlap 1h --stage prod'],
  },
  {
    name: 'revoke-expired',
    summary:
      'revoke every key whose rotation overlap has ended and delete their API Gateway keys (a stage runs it every 15 minutes: revokeExpiredKeys); safe to repeat',
    options: { stage: stageOption },
    examples: ['npm run keys -- revoke-expired --stage prod'],
  },
  {
    name: 'resume',
    args: '<keyId>',
    summary: 'finish a create or rotate that stopped half-way: give the new key, or the old key of a rotation (a pending key is refused until finished)',
    options: { stage: stageOption },
    examples: ['npm run keys -- resume key_0123456789ab --stage prod'],
  },
  {
    name: 'move',
    args: '<keyId>',
    summary: "put the key on another tier: on a stage its API Gateway key moves to the tier's usage plan; the tier is recorded (safe to repeat)",
    options: {
      tier: { type: 'string', value: PARTNER_TIERS.join('|'), description: 'the usage plan to move it to (required)' },
      stage: stageOption,
    },
    examples: ['npm run keys -- move key_0123456789ab --tier high', 'npm run keys -- move key_0123456789ab --tier standard --stage prod'],
  },
];

export function keyRow(key: ApiKeyRecord, now: Date): string[] {
  const state = keyState(key, now);
  return [
    key.keyId,
    state === 'expiring' || state === 'expired' ? `${state} ${key.expiresAt}` : state,
    key.partnerId,
    key.tier ?? '-',
    key.scopes.join(','),
    key.rateLimit ? `${key.rateLimit}/${key.rateWindowSeconds ?? 60}s` : 'partner',
    key.label,
    key.createdAt,
  ];
}

export const KEY_LIST_HEADER = ['KEY ID', 'STATE', 'PARTNER', 'TIER', 'SCOPES', 'RATE LIMIT', 'LABEL', 'CREATED'];

/** What `list --json` prints per key: everything but the hash. */
function keyJson(key: ApiKeyRecord, now: Date) {
  const { keyHash: _hash, ...rest } = key;
  return { ...rest, state: keyState(key, now) };
}

function parseScopes(raw: string | string[] | boolean | undefined): Scope[] {
  const scopes = listOption(raw);
  if (!scopes.length) throw new UsageError(`--scopes is required (${ALL_SCOPES.join(', ')})`);
  const unknown = scopes.filter((s) => !ALL_SCOPES.includes(s as Scope));
  if (unknown.length) throw new UsageError(`unknown scope ${unknown.join(', ')} (known: ${ALL_SCOPES.join(', ')})`);
  return scopes as Scope[];
}

export function parseTier(raw: string | undefined): PartnerTier | undefined {
  if (raw === undefined) return undefined;
  if (!PARTNER_TIERS.includes(raw as PartnerTier)) throw new UsageError(`--tier must be ${PARTNER_TIERS.join(' or ')}, got "${raw}"`);
  return raw as PartnerTier;
}

function oneKeyId(command: string, positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(`${command} takes exactly one key id, e.g. key_0123456789ab`);
  const keyId = positionals[0]!;
  if (!/^key_[0-9a-f]{12}$/.test(keyId)) throw new UsageError(`"${keyId}" is not a key id (key_ + 12 hex characters, see \`npm run keys -- list\`)`);
  return keyId;
}

export type KeysCliDependencies = AdminCliDependencies;

const KEYS_TOOL = {
  name: 'keys',
  summary: 'Partner API keys on the local stack (default) or a deployed stage (--stage).',
  commands: KeyCommands,
  footer: ['The secret is printed once, by create and rotate; keys are stored as SHA-256 hashes.'],
};

export function keysCli(argv: string[], io: CliIo, deps: KeysCliDependencies): Promise<number> {
  const now = deps.now ?? (() => new Date());
  const resolve = deps.resolveTarget;
  const adminFor = (target: AdminTarget) =>
    new KeyAdmin({
      store: target.store,
      gateway: target.gateway,
      now,
      report: (l) => io.err(`  ${l}\n`),
      audit: auditTrailRecorder(target.auditTrail, operatorName(), now),
    });
  return runCli('keys', io, async (setTarget) => {
    const read = readToolCommand(KEYS_TOOL, argv, io);
    if ('exitCode' in read) return read.exitCode;
    const { command, values, positionals } = read;
    const json = values.json === true;
    const stage = values.stage as string | undefined;

    // every option is validated before the target is touched
    switch (command) {
      case 'create': {
        if (positionals.length) throw new UsageError(`create takes no positional arguments (got ${positionals.join(' ')})`);
        const partnerId = values.partner as string | undefined;
        if (!partnerId) throw new UsageError('--partner is required');
        const scopes = parseScopes(values.scopes);
        const tier = parseTier(values.tier as string | undefined);
        if (values.window !== undefined && values['rate-limit'] === undefined) throw new UsageError('--window needs --rate-limit');
        const limits = values['rate-limit'] !== undefined ? rateLimitOption(values['rate-limit'] as string, values.window as string | undefined) : {};
        const target = resolve(stage);
        setTarget(target);
        const admin = adminFor(target);
        io.err(`${target.description}: creating a key for ${partnerId}\n`);
        const issued = await admin.create({ partnerId, scopes, tier, label: values.label as string | undefined, ...limits });
        if (json) io.out(JSON.stringify({ ...keyJson(issued.record, now()), secret: issued.secret }) + '\n');
        else
          io.out(
            `created ${issued.record.keyId} for ${partnerId} (${issued.record.scopes.join(' ')}; tier ${issued.record.tier})\nsecret (shown once): ${issued.secret}\n`,
          );
        return 0;
      }
      case 'list': {
        if (positionals.length) throw new UsageError('list takes no positional arguments');
        const target = resolve(stage);
        setTarget(target);
        const partner = values.partner as string | undefined;
        const keys = (await target.store.listKeys()).filter((k) => !partner || k.partnerId === partner);
        const at = now();
        if (json)
          io.out(
            JSON.stringify(
              keys.map((k) => keyJson(k, at)),
              null,
              2,
            ) + '\n',
          );
        else
          io.out(
            table(
              KEY_LIST_HEADER,
              keys.map((k) => keyRow(k, at)),
            ),
          );
        return 0;
      }
      case 'revoke':
      case 'resume': {
        const keyId = oneKeyId(command, positionals);
        const target = resolve(stage);
        setTarget(target);
        const admin = adminFor(target);
        io.err(`${target.description}: ${command} ${keyId}\n`);
        const key = command === 'revoke' ? await admin.revoke(keyId) : await admin.resume(keyId);
        io.out(`${command === 'revoke' ? 'revoked' : key.status} ${keyId}\n`);
        return 0;
      }
      case 'rotate': {
        const keyId = oneKeyId(command, positionals);
        const overlapMs = durationOption('overlap', (values.overlap as string | undefined) ?? DEFAULT_OVERLAP);
        const target = resolve(stage);
        setTarget(target);
        const admin = adminFor(target);
        io.err(`${target.description}: rotating ${keyId}\n`);
        const issued = await admin.rotate(keyId, overlapMs);
        if (json)
          io.out(JSON.stringify({ ...keyJson(issued.record, now()), ...(issued.secret ? { secret: issued.secret } : {}), resumed: issued.resumed }) + '\n');
        else {
          io.out(
            issued.secret
              ? `created ${issued.record.keyId} replacing ${keyId}; ${keyId} works until ${issued.record.replacesUntil}\nsecret (shown once): ${issued.secret}\n`
              : `finished ${issued.record.keyId} replacing ${keyId}; ${keyId} works until ${issued.record.replacesUntil}\n(its secret was shown by the run that started the rotation)\n`,
          );
          io.err(
            `after ${issued.record.replacesUntil} the service refuses ${keyId}; revoke-expired (scheduled on a stage; \`npm run keys -- revoke-expired${target.stage ? ` --stage ${target.stage}` : ''}\`) revokes it and deletes its API Gateway key\n`,
          );
        }
        return 0;
      }
      case 'revoke-expired': {
        if (positionals.length) throw new UsageError('revoke-expired takes no positional arguments');
        const target = resolve(stage);
        setTarget(target);
        const admin = adminFor(target);
        const { revoked, gatewayKeysDeleted } = await admin.revokeExpired();
        io.out(revoked.length ? `revoked ${revoked.join(' ')}\n` : 'no expired keys\n');
        if (gatewayKeysDeleted.length) io.out(`deleted the API Gateway keys of revoked ${gatewayKeysDeleted.join(' ')}\n`);
        return 0;
      }
      case 'move': {
        const keyId = oneKeyId(command, positionals);
        const tier = parseTier(values.tier as string | undefined);
        if (!tier) throw new UsageError(`--tier is required (${PARTNER_TIERS.join(' or ')})`);
        const target = resolve(stage);
        setTarget(target);
        const admin = adminFor(target);
        io.err(`${target.description}: moving ${keyId} to tier ${tier}\n`);
        const { before } = await admin.move(keyId, tier);
        io.out(before === tier ? `${keyId} is on tier ${tier} (nothing changed)\n` : `moved ${keyId}: tier ${before} -> ${tier}\n`);
        return 0;
      }
    }
    return 2;
  });
}
