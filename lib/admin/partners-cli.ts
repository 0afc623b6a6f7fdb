/**
 * `npm run partners -- <command>`: partner records on the local stack or a deployed stage
 * (lib/admin/partner-admin.ts does the work; this file is the command line).
 */
import {
  PARTNER_KINDS,
  PARTNER_TIERS,
  PATIENT_ACCESS_VALUES,
  partnerKind,
  partnerPatientAccess,
  partnerTier,
  type PartnerKind,
  type PartnerRecord,
  type PatientAccess,
} from '../keys/api-key';
import { isChartId } from '../chart/chart-items';
import { isPurposeOfUse, PURPOSES_OF_USE, type PartnerPatientRelationship } from '../relationships/relationships';
import { UNTIL_RULE, untilInstant } from '../relationships/relationship-until';
import { RelationshipAdmin, shownRelationship } from './relationship-admin';
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
  patientAccessText,
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

const patientAccessOption = {
  type: 'string',
  value: PATIENT_ACCESS_VALUES.join('|'),
  description:
    "which chart patients its keys may read: related (only those it has a relationship with: npm run partners -- relate) or all (the organisation's own downstream systems). Default for a new partner: related when external, all when internal. Writes always need a relationship",
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
      'patient-access': patientAccessOption,
      'partner-id': partnerIdOption,
      stage: stageOption,
      json: jsonOption,
    },
    examples: [
      'npm run partners -- create acme-ehr-feed --tier standard --patient-access all',
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
      'patient-access': {
        ...patientAccessOption,
        description: `${patientAccessOption.description} (from the next request on, within the authorizer's 10 s record bound)`,
      },
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
      'npm run partners -- update acme-lab --patient-access related',
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
    options: {
      'patient-access': { type: 'string', value: PATIENT_ACCESS_VALUES.join('|'), description: 'only the partners with this patient access' },
      stage: stageOption,
      json: jsonOption,
    },
    examples: ['npm run partners -- list', 'npm run partners -- list --json --stage prod', 'npm run partners -- list --patient-access all'],
  },
  {
    name: 'patient-access',
    summary:
      "the partners whose keys may read every chart patient (patient access all), and whether it was set or is the unset value of a partner stored before relationships: the upgrade step's list. Set each with npm run partners -- update <partnerId> --patient-access related|all",
    options: { stage: stageOption, json: jsonOption },
    examples: ['npm run partners -- patient-access', 'npm run partners -- patient-access --stage prod --json'],
  },
  {
    name: 'relate',
    args: '<partnerId> <patientId>',
    summary:
      'let the partner reach a chart patient: a relationship (source operator) with a purpose of use and optionally an end. A holding one gets the purpose or until given (nothing else changes); an ended or expired one is made anew',
    options: {
      purpose: {
        type: 'string',
        value: 'CODE',
        description: `HL7 v3 PurposeOfUse: ${PURPOSES_OF_USE.join(', ')} (default TREAT for a new relationship)`,
      },
      until: { type: 'string', value: 'DATE', description: `when it stops holding: ${UNTIL_RULE.replace(/^must be /, '')} (default: until ended)` },
      stage: stageOption,
      json: jsonOption,
    },
    examples: [
      'npm run partners -- relate acme-lab demo-patient-1',
      'npm run partners -- relate acme-lab demo-patient-2 --purpose TREAT --until 2027-06-30',
      'npm run partners -- relate acme-payer demo-patient-2 --purpose HPAYMT --stage prod',
    ],
  },
  {
    name: 'unrelate',
    args: '<partnerId> <patientId>',
    summary: 'end the relationship: the partner reaches the patient no more from the next request on (the record stays, with when and by whom it ended)',
    options: { stage: stageOption, json: jsonOption },
    examples: ['npm run partners -- unrelate acme-lab demo-patient-1'],
  },
  {
    name: 'relations',
    args: '[<partnerId>]',
    summary: "a partner's relationships (or a patient's, with --patient), ended ones too: purpose, source, since, until, who made and ended it",
    options: {
      patient: { type: 'string', value: 'ID', description: "a chart patient's relationships instead of a partner's" },
      stage: stageOption,
      json: jsonOption,
    },
    examples: ['npm run partners -- relations acme-lab', 'npm run partners -- relations --patient demo-patient-1 --json'],
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
  'PATIENT ACCESS',
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
    patientAccessText(p),
    p.name,
  ];
}

/** `patientAccess` is the effective value; `patientAccessSet` false for a partner stored before relationships (it reads as `all`). */
const partnerJson = (p: PartnerRecord) => ({
  ...p,
  kind: partnerKind(p),
  tier: partnerTier(p),
  patientAccess: partnerPatientAccess(p),
  patientAccessSet: p.patientAccess !== undefined,
});

export const RELATIONS_HEADER = ['PARTNER', 'PATIENT', 'HOLDS', 'PURPOSE', 'SOURCE', 'SINCE', 'UNTIL', 'CREATED BY', 'ENDED', 'ENDED BY'];

function relationRow(r: PartnerPatientRelationship, now: Date): string[] {
  return [
    r.partnerId,
    r.patientId,
    shownRelationship(r, now).holds ? 'yes' : 'no',
    r.purpose,
    r.source,
    r.since,
    r.until ?? '-',
    r.createdBy,
    r.endedAt ?? '-',
    r.endedBy ?? '-',
  ];
}

/** `--patient-access` (undefined when absent); another value is a usage error. */
function patientAccessOf(raw: string | boolean | string[] | undefined): PatientAccess | undefined {
  if (raw === undefined) return undefined;
  if (!PATIENT_ACCESS_VALUES.includes(raw as PatientAccess))
    throw new UsageError(`--patient-access must be ${PATIENT_ACCESS_VALUES.join(' or ')}, got "${String(raw)}"`);
  return raw as PatientAccess;
}

/** `<partnerId> <patientId>`, both well-formed (a usage error before anything is read). */
function relationIdsOf(command: string, positionals: string[]): { partnerId: string; patientId: string } {
  if (positionals.length !== 2) throw new UsageError(`${command} takes a partner id and a patient id`);
  const [partnerId, patientId] = positionals as [string, string];
  if (!PARTNER_ID_PATTERN.test(partnerId)) throw new UsageError(`partner id must be lower-case letters, digits and '-', 2-63 characters, got "${partnerId}"`);
  if (!isChartId(patientId)) throw new UsageError(`patient id must be 1-128 characters from A-Z a-z 0-9 . _ : -, got "${patientId}"`);
  return { partnerId, patientId };
}

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
  'patient-access',
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
        const patientAccess = patientAccessOf(values['patient-access']);
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
            patientAccess,
            ...limits,
          },
          now(),
        );
        if (json) io.out(JSON.stringify({ outcome, partner: partnerJson(partner) }) + '\n');
        else
          io.out(
            `${outcome === 'created' ? 'created' : 'exists (same settings, nothing changed):'} partner ${partnerId} on ${target.description} (tier ${partnerTier(partner)}, ${partnerKind(partner)}, patient access ${patientAccessText(partner)}${partner.assigningAuthorities?.length ? `; assigning authority ${partner.assigningAuthorities.join(', ')}` : ''})\n`,
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
        const patientAccess = patientAccessOf(values['patient-access']);
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
            patientAccess,
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
        const only = patientAccessOf(values['patient-access']);
        const { admin } = connect();
        const partners = (await admin.list()).filter((p) => only === undefined || partnerPatientAccess(p) === only);
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
      case 'patient-access': {
        if (positionals.length) throw new UsageError('patient-access takes no positional arguments');
        const { target, admin } = connect();
        const all = (await admin.list()).filter((p) => partnerPatientAccess(p) === 'all');
        const unset = all.filter((p) => p.patientAccess === undefined);
        if (json) io.out(JSON.stringify(all.map(partnerJson), null, 2) + '\n');
        else {
          io.out(
            table(
              ['PARTNER', 'KIND', 'PATIENT ACCESS', 'POLICY', 'NAME'],
              all.map((p) => [p.partnerId, partnerKind(p), patientAccessText(p), p.policy, p.name]),
            ),
          );
          io.out(
            `${all.length} partner(s) on ${target.description} may read every chart patient; ${unset.length} of them unset (stored before relationships): set each with npm run partners -- update <partnerId> --patient-access related|all\n`,
          );
        }
        return 0;
      }
      case 'relate':
      case 'unrelate': {
        const { partnerId, patientId } = relationIdsOf(command, positionals);
        const purpose = values.purpose as string | undefined;
        if (purpose !== undefined && !isPurposeOfUse(purpose)) throw new UsageError(`--purpose must be one of ${PURPOSES_OF_USE.join(', ')}, got "${purpose}"`);
        const untilRaw = values.until as string | undefined;
        const until = untilRaw === undefined ? undefined : untilInstant(untilRaw);
        if (untilRaw !== undefined && !until) throw new UsageError(`--until ${UNTIL_RULE}, got "${untilRaw}"`);
        const at = now();
        if (until !== undefined && Date.parse(until) <= at.getTime()) throw new UsageError(`--until must be in the future, got "${untilRaw}"`);
        const { target } = connect();
        const relationships = new RelationshipAdmin(target.store, target.chart, operatorName(), auditTrailRecorder(target.auditTrail, operatorName(), now));
        if (command === 'unrelate') {
          const ended = await relationships.unrelate(partnerId, patientId, at);
          if (json) io.out(JSON.stringify({ outcome: 'ended', relationship: shownRelationship(ended, at) }) + '\n');
          else io.out(`ended the relationship of partner ${partnerId} with patient ${patientId} on ${target.description} (from the next request on)\n`);
          return 0;
        }
        const { outcome, relationship } = await relationships.relate(
          { partnerId, patientId, purpose: purpose as typeof relationship.purpose | undefined, until },
          at,
        );
        const shown = shownRelationship(relationship, at);
        if (json) io.out(JSON.stringify({ outcome, relationship: shown }) + '\n');
        else
          io.out(
            `${outcome === 'unchanged' ? 'already related (nothing changed):' : outcome === 'updated' ? 'updated relationship:' : 'related:'} partner ${partnerId} with patient ${patientId} on ${target.description} (purpose ${relationship.purpose}, ${relationship.until ? `until ${relationship.until}` : 'until ended'}, source ${relationship.source})\n`,
          );
        return 0;
      }
      case 'relations': {
        const patient = values.patient as string | undefined;
        if (patient !== undefined && positionals.length) throw new UsageError('relations takes a partner id or --patient, not both');
        if (patient === undefined && positionals.length !== 1) throw new UsageError('relations takes one partner id (or --patient <patientId>)');
        if (patient !== undefined && !isChartId(patient)) throw new UsageError(`--patient must be 1-128 characters from A-Z a-z 0-9 . _ : -, got "${patient}"`);
        const { target } = connect();
        const relationships = new RelationshipAdmin(target.store, target.chart, operatorName());
        const list = patient !== undefined ? await relationships.ofPatient(patient) : await relationships.ofPartner(onePartnerId(command, positionals));
        const at = now();
        if (json)
          io.out(
            JSON.stringify(
              list.map((r) => shownRelationship(r, at)),
              null,
              2,
            ) + '\n',
          );
        else
          io.out(
            table(
              RELATIONS_HEADER,
              list.map((r) => relationRow(r, at)),
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
