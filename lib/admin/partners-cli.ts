/**
 * `npm run partners -- <command>`: partner records on the local stack or a deployed stage
 * (lib/admin/partner-admin.ts does the work; this file is the command line).
 */
import { PARTNER_KINDS, PARTNER_TIERS, partnerKind, partnerTier, type PartnerKind, type PartnerRecord } from '../keys/api-key';
import { listOption, rateLimitOption, readToolCommand, table, UsageError, type CommandSpec } from './cli-options';
import { runCli, type AdminCliDependencies, type CliIo } from './cli-runner';
import { keyRow, KEY_LIST_HEADER, parseTier } from './keys-cli';
import { auditTrailRecorder, operatorName } from './admin-audit';
import { AdminError } from './key-admin';
import { IDENTITY_KINDS, IdentityNamespaces } from '../keys/identity-claims';
import {
  CONFLICT_STATUSES,
  conflictAdvice,
  hl7ProfileText,
  HL7_PROFILE_FIELDS,
  parseHl7Profile,
  PARTNER_ID_PATTERN,
  PartnerAdmin,
  type ClaimRef,
  type ClaimRow,
} from './partner-admin';

const stageOption = {
  type: 'string',
  value: 'NAME',
  description: 'act on a deployed stage (default: the local stack; also INTEROP_STAGE). Uses AWS_REGION and the usual AWS credentials',
} as const;
const jsonOption = { type: 'boolean', description: 'print JSON instead of text' } as const;
const partnerIdOption = { type: 'string', value: 'ID', description: 'the partner id (instead of the positional <partnerId>)' } as const;
const senderIdOption = {
  type: 'string',
  value: 'ID',
  description:
    'lab sender id (senderID, MSH-4) it owns and may submit results for; comma-separated. One owner per id (compared trimmed, without case); never "*"',
  multiple: true,
} as const;
const formSourceOption = {
  type: 'string',
  value: 'ID',
  description:
    'form tool sourceSystemId it owns (its form packets carry it); comma-separated. One owner per id (compared trimmed, without case); never "*". Without one its packets are refused (403)',
  multiple: true,
} as const;
const assigningAuthorityOption = {
  type: 'string',
  value: 'NAME',
  description:
    "HL7 assigning authority (CX-4) it owns, trimmed and upper-cased; comma-separated. One owner per authority; never the chart's own (CHART_ASSIGNING_AUTHORITY)",
  multiple: true,
} as const;

const timeZoneOption = {
  type: 'string',
  value: 'ZONE',
  description: 'IANA time zone of its HL7 time stamps without an offset, e.g. America/Chicago (default UTC)',
} as const;

const hl7ProfileOption = {
  type: 'string',
  value: 'F=V,...',
  description: `HL7 export profile (README, "HL7 partner profiles"): ${Object.keys(HL7_PROFILE_FIELDS).join(', ')}, e.g. encounterStyle=oru,noteDocumentType=PR`,
} as const;

export const PartnerCommands: CommandSpec[] = [
  {
    name: 'create',
    args: '<partnerId>',
    summary: 'create a partner (idempotent: the same settings again change nothing; different ones are refused)',
    options: {
      tier: { type: 'string', value: PARTNER_TIERS.join('|'), description: 'usage plan of its keys (required)' },
      kind: {
        type: 'string',
        value: PARTNER_KINDS.join('|'),
        description: "external (default) or internal: the clinic's own staff, the only partners whose keys may review the inbox",
      },
      name: { type: 'string', value: 'TEXT', description: 'display name (default: the id)' },
      'sender-id': senderIdOption,
      'form-source': formSourceOption,
      'assigning-authority': assigningAuthorityOption,
      'receiving-application': { type: 'string', value: 'A', description: 'MSH-5 of messages it receives' },
      'receiving-facility': { type: 'string', value: 'F', description: 'MSH-6 of messages it receives' },
      'rate-limit': { type: 'string', value: 'N/Ss', description: 'requests per window for its keys (default 1000/60s)' },
      'time-zone': timeZoneOption,
      'hl7-profile': hl7ProfileOption,
      'partner-id': partnerIdOption,
      stage: stageOption,
      json: jsonOption,
    },
    examples: [
      'npm run partners -- create acme-lab --tier standard --sender-id ACME --assigning-authority ACME-LAB --time-zone America/Chicago',
      'npm run partners -- create acme-ehr --tier high --receiving-application ACME-EHR --receiving-facility ACME-CLINIC --stage prod',
      'npm run partners -- create acme-forms --tier standard --form-source acme-intake',
      'npm run partners -- create clinic-staff --tier standard --kind internal',
    ],
  },
  {
    name: 'update',
    args: '<partnerId>',
    summary:
      'change the given settings of a partner (absent options keep theirs; a list option replaces the list, "" empties it). New authorities, sender ids and form sources are claimed first, dropped ones released',
    options: {
      tier: { type: 'string', value: PARTNER_TIERS.join('|'), description: 'usage plan of keys created from now on' },
      name: { type: 'string', value: 'TEXT', description: 'display name' },
      'sender-id': senderIdOption,
      'form-source': formSourceOption,
      'assigning-authority': assigningAuthorityOption,
      'receiving-application': { type: 'string', value: 'A', description: 'MSH-5 of messages it receives ("" removes it)' },
      'receiving-facility': { type: 'string', value: 'F', description: 'MSH-6 of messages it receives ("" removes it)' },
      'rate-limit': { type: 'string', value: 'N/Ss', description: 'requests per window for its keys' },
      'time-zone': { ...timeZoneOption, description: `${timeZoneOption.description}; "" removes it` },
      'hl7-profile': { ...hl7ProfileOption, description: `${hl7ProfileOption.description}; replaces the whole profile, "" removes it (every default)` },
      'partner-id': partnerIdOption,
      stage: stageOption,
      json: jsonOption,
    },
    examples: [
      'npm run partners -- update --partner-id acme-lab --assigning-authority ACME-LAB,ACME-LAB-2',
      'npm run partners -- update acme-lab --sender-id ACME,ACME-2 --rate-limit 500/60s',
      "npm run partners -- update acme-ehr --receiving-facility '' --stage prod",
      'npm run partners -- update acme-ehr --hl7-profile encounterStyle=oru,summaryStyle=batch,noteDocumentType=PR',
      'npm run partners -- update acme-forms --form-source acme-intake --time-zone America/Chicago --tier high',
    ],
  },
  {
    name: 'claims',
    summary:
      'every assigning authority, sender id and form source: its owner (claim), the partners listing it, and its status (owned, unclaimed, stale, shared, wildcard, chart). Exit 0 when all are owned by their only lister, else 1',
    options: {
      repair: {
        type: 'boolean',
        description:
          'claim each unclaimed id for its one lister and release stale claims (held by a partner not listing the id); exit 1 listing the conflicts only the operator can resolve (shared ids, wildcards, the chart authority)',
      },
      stage: stageOption,
      json: jsonOption,
    },
    examples: ['npm run partners -- claims', 'npm run partners -- claims --repair --stage prod', 'npm run partners -- claims --json'],
  },
  {
    name: 'list',
    summary: 'list partners',
    options: { stage: stageOption, json: jsonOption },
    examples: ['npm run partners -- list', 'npm run partners -- list --json --stage prod'],
  },
  {
    name: 'show',
    args: '<partnerId>',
    summary: 'one partner and its keys',
    options: { stage: stageOption, json: jsonOption },
    examples: ['npm run partners -- show acme-lab'],
  },
  {
    name: 'block',
    args: '<partnerId>',
    summary: 'refuse every key of the partner (403) from the next request on',
    options: { stage: stageOption },
    examples: ['npm run partners -- block acme-lab'],
  },
  {
    name: 'unblock',
    args: '<partnerId>',
    summary: 'let its active keys work again',
    options: { stage: stageOption },
    examples: ['npm run partners -- unblock acme-lab'],
  },
];

export const PARTNER_LIST_HEADER = [
  'PARTNER',
  'POLICY',
  'KIND',
  'TIER',
  'RATE LIMIT',
  'SENDER IDS',
  'FORM SOURCES',
  'AUTHORITIES',
  'RECEIVING APP/FACILITY',
  'HL7 PROFILE',
  'NAME',
];

function partnerRow(p: PartnerRecord): string[] {
  return [
    p.partnerId,
    p.policy,
    partnerKind(p),
    partnerTier(p),
    `${p.rateLimit}/${p.rateWindowSeconds}s`,
    p.allowedSenderIds.join(',') || '-',
    (p.allowedFormSourceIds ?? []).join(',') || '-',
    (p.assigningAuthorities ?? []).join(',') || '-',
    p.receivingApplication || p.receivingFacility ? `${p.receivingApplication ?? '-'}/${p.receivingFacility ?? '-'}` : '-',
    hl7ProfileText(p.hl7Profile) || '-',
    p.name,
  ];
}

const partnerJson = (p: PartnerRecord) => ({ ...p, kind: partnerKind(p), tier: partnerTier(p) });

export const CLAIMS_HEADER = ['KIND', 'ID', 'OWNER', 'LISTED BY', 'STATUS'];

const claimRow = (row: ClaimRow) => [IdentityNamespaces[row.kind].label, row.id, row.owner ?? '-', row.listedBy.join(',') || '-', row.status];

/** `claimed sender id A, B` per kind (nothing when none). */
function claimLines(verb: string, refs: readonly ClaimRef[]): string {
  return IDENTITY_KINDS.map((kind) => {
    const ids = refs.filter((r) => r.kind === kind).map((r) => r.id);
    return ids.length ? `${verb} ${IdentityNamespaces[kind].label} ${ids.join(', ')}\n` : '';
  }).join('');
}

function onePartnerId(command: string, positionals: string[]): string {
  if (positionals.length !== 1) throw new UsageError(`${command} takes exactly one partner id`);
  return positionals[0]!;
}

/** `<partnerId>` or `--partner-id ID` (both: they must agree). */
function partnerIdOf(command: string, positionals: string[], option: string | boolean | string[] | undefined): string {
  if (typeof option !== 'string') return onePartnerId(command, positionals);
  if (positionals.length > 1 || (positionals.length === 1 && positionals[0] !== option)) {
    throw new UsageError(`${command} takes one partner id: the positional one or --partner-id, not two different ones`);
  }
  return option;
}

/** The options of `update` that change a field. */
const UPDATE_FIELDS = [
  'name',
  'tier',
  'sender-id',
  'form-source',
  'assigning-authority',
  'receiving-application',
  'receiving-facility',
  'rate-limit',
  'time-zone',
  'hl7-profile',
];

/** `--hl7-profile` (undefined when absent); a malformed value is a usage error (exit 2). */
function hl7ProfileOf(raw: string | boolean | string[] | undefined) {
  if (raw === undefined) return undefined;
  try {
    return parseHl7Profile(String(raw));
  } catch (error) {
    if (error instanceof AdminError) throw new UsageError(`--hl7-profile: ${error.message.replace(/; nothing changed$/, '')}`);
    throw error;
  }
}

/** A repeatable list option: undefined when absent (keep), else the list ('' gives the empty list). */
const listIfGiven = (raw: string | boolean | string[] | undefined): string[] | undefined => (raw === undefined ? undefined : listOption(raw));

export type PartnersCliDependencies = AdminCliDependencies;

const PARTNERS_TOOL = {
  name: 'partners',
  summary: 'Partner records on the local stack (default) or a deployed stage (--stage).',
  commands: PartnerCommands,
  footer: ['Keys for a partner: npm run keys -- create --partner ID --scopes ...'],
};

export function partnersCli(argv: string[], io: CliIo, deps: PartnersCliDependencies): Promise<number> {
  const resolve = deps.resolveTarget;
  const now = deps.now ?? (() => new Date());
  return runCli('partners', io, async (setTarget) => {
    const read = readToolCommand(PARTNERS_TOOL, argv, io);
    if ('exitCode' in read) return read.exitCode;
    const { command, values, positionals } = read;
    const json = values.json === true;
    const connect = () => {
      const target = resolve(values.stage as string | undefined);
      setTarget(target);
      return { target, admin: new PartnerAdmin(target.store, auditTrailRecorder(target.auditTrail, operatorName(), now)) };
    };
    switch (command) {
      case 'create': {
        const partnerId = partnerIdOf(command, positionals, values['partner-id']);
        // a malformed argument is wrong usage (exit 2), checked before anything is read
        if (!PARTNER_ID_PATTERN.test(partnerId))
          throw new UsageError(`partner id must be lower-case letters, digits and '-', 2-63 characters, got "${partnerId}"`);
        const tier = parseTier(values.tier as string | undefined);
        if (!tier) throw new UsageError(`--tier is required (${PARTNER_TIERS.join(' or ')})`);
        const kind = (values.kind as string | undefined) ?? 'external';
        if (!PARTNER_KINDS.includes(kind as PartnerKind)) throw new UsageError(`--kind must be ${PARTNER_KINDS.join(' or ')}, got "${kind}"`);
        const limits = values['rate-limit'] !== undefined ? rateLimitOption(values['rate-limit'] as string) : {};
        const hl7Profile = hl7ProfileOf(values['hl7-profile']);
        const { target, admin } = connect();
        const { outcome, partner } = await admin.create(
          {
            partnerId,
            tier,
            kind: kind as PartnerKind,
            name: values.name as string | undefined,
            senderIds: listOption(values['sender-id']),
            formSourceIds: listOption(values['form-source']),
            assigningAuthorities: listOption(values['assigning-authority']),
            receivingApplication: values['receiving-application'] as string | undefined,
            receivingFacility: values['receiving-facility'] as string | undefined,
            timeZone: (values['time-zone'] as string | undefined)?.trim() || undefined,
            hl7Profile,
            ...limits,
          },
          now(),
        );
        if (json) io.out(JSON.stringify({ outcome, partner: partnerJson(partner) }) + '\n');
        else
          io.out(
            `${outcome === 'created' ? 'created' : 'exists (same settings, nothing changed):'} partner ${partnerId} on ${target.description} (tier ${partnerTier(partner)}, ${partnerKind(partner)}${partner.assigningAuthorities?.length ? `; assigning authority ${partner.assigningAuthorities.join(', ')}` : ''})\n`,
          );
        return 0;
      }
      case 'update': {
        const partnerId = partnerIdOf(command, positionals, values['partner-id']);
        if (!UPDATE_FIELDS.some((f) => values[f] !== undefined))
          throw new UsageError(`update needs at least one of ${UPDATE_FIELDS.map((f) => `--${f}`).join(', ')}`);
        const tier = parseTier(values.tier as string | undefined);
        const limits = values['rate-limit'] !== undefined ? rateLimitOption(values['rate-limit'] as string) : {};
        const hl7Profile = hl7ProfileOf(values['hl7-profile']);
        const { target, admin } = connect();
        const result = await admin.update(
          {
            partnerId,
            tier,
            name: values.name as string | undefined,
            senderIds: listIfGiven(values['sender-id']),
            formSourceIds: listIfGiven(values['form-source']),
            assigningAuthorities: listIfGiven(values['assigning-authority']),
            receivingApplication: (values['receiving-application'] as string | undefined)?.trim(),
            receivingFacility: (values['receiving-facility'] as string | undefined)?.trim(),
            timeZone: (values['time-zone'] as string | undefined)?.trim(),
            hl7Profile,
            ...limits,
          },
          now(),
        );
        const outcome = result.changes.length ? 'updated' : 'unchanged';
        if (json)
          io.out(
            JSON.stringify({ outcome, partner: partnerJson(result.partner), changes: result.changes, claimed: result.claimed, released: result.released }) +
              '\n',
          );
        else if (!result.changes.length) io.out(`partner ${partnerId} on ${target.description}: same settings, nothing changed\n`);
        else {
          io.out(`updated partner ${partnerId} on ${target.description}: ${result.changes.join('; ')}\n`);
          io.out(claimLines('claimed', result.claims.claimed) + claimLines('released', result.claims.released));
        }
        return 0;
      }
      case 'claims': {
        if (positionals.length) throw new UsageError('claims takes no positional arguments');
        const { target, admin } = connect();
        const repair = values.repair === true ? await admin.repairClaims(now()) : undefined;
        const rows = repair?.rows ?? (await admin.claimsReport());
        const conflicts = rows.filter((r) => CONFLICT_STATUSES.includes(r.status));
        const open = rows.filter((r) => r.status !== 'owned');
        if (json)
          io.out(
            JSON.stringify(
              { claims: rows, conflicts: conflicts.map(conflictAdvice), ...(repair ? { claimed: repair.claimed, released: repair.released } : {}) },
              null,
              2,
            ) + '\n',
          );
        else {
          io.out(table(CLAIMS_HEADER, rows.map(claimRow)));
          for (const r of repair?.released ?? []) io.out(`released stale claim on ${IdentityNamespaces[r.kind].label} ${r.id} (held by ${r.partnerId})\n`);
          for (const r of repair?.claimed ?? []) io.out(`claimed ${IdentityNamespaces[r.kind].label} ${r.id} for ${r.partnerId}\n`);
        }
        if (!open.length) {
          if (!json) io.out(`every id on ${target.description} is owned by its only lister\n`);
          return 0;
        }
        for (const row of conflicts) io.err(`conflict: ${conflictAdvice(row)}\n`);
        const repairable = open.length - conflicts.length;
        if (repairable) io.err(`${repairable} id(s) unclaimed or with a stale claim: run npm run partners -- claims --repair\n`);
        return 1;
      }
      case 'list': {
        if (positionals.length) throw new UsageError('list takes no positional arguments');
        const { admin } = connect();
        const partners = await admin.list();
        io.out(json ? JSON.stringify(partners.map(partnerJson), null, 2) + '\n' : table(PARTNER_LIST_HEADER, partners.map(partnerRow)));
        return 0;
      }
      case 'show': {
        const partnerId = onePartnerId(command, positionals);
        const { target, admin } = connect();
        const partner = await admin.show(partnerId);
        const keys = (await target.store.listKeys()).filter((k) => k.partnerId === partnerId);
        const at = now();
        if (json) io.out(JSON.stringify({ partner: partnerJson(partner), keys: keys.map(({ keyHash: _h, ...k }) => k) }, null, 2) + '\n');
        else
          io.out(
            table(PARTNER_LIST_HEADER, [partnerRow(partner)]) +
              '\n' +
              table(
                KEY_LIST_HEADER,
                keys.map((k) => keyRow(k, at)),
              ),
          );
        return 0;
      }
      case 'block':
      case 'unblock': {
        const partnerId = onePartnerId(command, positionals);
        const { admin } = connect();
        const policy = command === 'block' ? 'blocked' : 'active';
        const before = await admin.setPolicy(partnerId, policy);
        io.out(
          before === policy
            ? `partner ${partnerId} was ${policy} already (nothing changed)\n`
            : `partner ${partnerId}: ${before} -> ${policy} (from the next request on)\n`,
        );
        return 0;
      }
    }
    return 2;
  });
}
