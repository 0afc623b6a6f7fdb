/**
 * What each supported HL7 message does to the service's data (docs/write-authority.md: partners write
 * only what they own; the chart's patients and notes are never changed by a partner):
 *
 *   ORU^R01                    each OBR with its OBX -> one lab result through receiveLabResult (the code path
 *                              of POST /receiveTestData: validation, encryption, versions, current pointer,
 *                              notification), filed to the resolved chart patient, else held for review;
 *                              ORC/OBR/SPM facts and NTE after the OBR -> `order`, per OBX its codes, typed
 *                              value, flags, status, time, comments (docs/hl7-intake.md, issue 27)
 *   ADT^A01/A04/A08/A28/A31    PID (+PD1, NK1; PV1, DG1, AL1: lib/intake/adt-content.ts) -> the sender's own view
 *                              of the person (a partner identity),
 *                              linked to a chart patient when the chart MRN and the demographics agree, else
 *                              held for review; never the chart patient, the MRN index or the match index
 *   ADT^A40                    held for review (never applied)
 *   MDM^T02                    a new document of the sender (`<partnerId>:<TXA-12>`), filed to the resolved
 *                              chart patient, else held for review; a TXA-12 the sender used before with
 *                              other content is AE 205 whatever the patient (lib/intake/document-numbers.ts)
 *   MDM^T08/T10                a new version of the sender's own document (the earlier version kept)
 *
 * Patient resolution (lib/intake/patient-resolution.ts) never changes the answer: AA whether or not
 * the patient is known. A record is filed into a chart patient only when the sending partner has a
 * holding relationship with the patient (lib/relationships/patient-access.ts mayFileForPatient, for
 * every partner whatever its patient access) and the message's demographics agree with the chart;
 * otherwise it is held for staff (`no-relationship`), answered as a filed one. An ADT links the
 * partner's identity by matching only under the same rule. A handler answers AA, or throws {@link AckRejection} (AE/AR with ERR entries)
 * before writing anything. Error texts name the rule and the location, never a submitted value.
 */
import { checkNoteValues, checkPatientValues } from '../chart/record-rules';
import type {
  AssignedIdentifier,
  Clinician,
  Coding,
  EntityIdentifier,
  LabAddress,
  LabOrder,
  LabPerson,
  LabTestSummary,
  Note,
  Patient,
  Provenance,
} from '../chart/types';
import { ValidationFailedError } from '../domain-errors';
import type { AckError } from '../hl7/ack';
import { ErrorCodes, type ErrorLocation } from '../hl7/parse-error';
import { firstSegment, repetitionsOf, valueAt, type ParsedMessage, type ParsedSegment } from '../hl7/parser';
import type { Principal } from '../keys/access-decision';
import { receiveLabResult, senderAllowed, type ReceiveDependencies } from '../results/receive';
import { resultStatusFromTable0123, TABLE_0123_VALUES } from '../results/status';
import { acceptLabResult, acceptableCollectionEnd } from '../results/validation';
import { AckRejection, reject } from './ack-rejection';
import { adtContentFrom, adtContentProblems, locateAdtContent, withAdtContent } from './adt-content';
import { mayFileForPatient, type RelationshipLookup } from '../relationships/patient-access';
import type { DocumentNumberUse } from './document-numbers';
import { heldIdFor, type HeldRecord } from './held-records';
import {
  address,
  clinician,
  codedValue,
  compact,
  dateFromDt,
  DEFAULT_TIME_ZONE,
  dateTimeFromTs,
  instantFromTs,
  isTimeZone,
  partialFromTs,
  personName,
  present,
  telecoms,
} from './hl7-values';
import type { PartnerIdentity } from './partner-identities';
import { documentContent, sameDocument } from './same-document';
import {
  chartIdentifierKey,
  checkNamespaces,
  claimedPerson,
  demographicsAgree,
  findChartPatient,
  pidIdentifiers,
  requireRelationship,
  resolvePatient,
  senderIdentityKey,
  type Resolution,
  type ResolutionDependencies,
} from './patient-resolution';

export { AckRejection, reject };

export interface IntakeAudit {
  action: string;
  patientId?: string;
  resourceIds?: Record<string, string>;
}

export interface HandledMessage {
  audit: IntakeAudit;
  /** what the ACK says besides AA: ERR severity W, e.g. a time left out (an ORU's time that is no real time) */
  warnings?: AckError[];
}

/** What intake may do to the chart: read patients and notes, add a partner's note, replace the partner's own. */
export interface ChartAccess {
  getPatient(patientId: string): Promise<Patient | undefined>;
  getNote(patientId: string, noteId: string): Promise<Note | undefined>;
  putNoteIfAbsent(note: Note): Promise<boolean>;
  replacePartnerNote(note: Note, partnerId: string): Promise<boolean>;
}

export interface MergeReviews {
  hold(request: {
    reviewId: string;
    survivingPatientId?: string;
    priorPatientId?: string;
    priorIdentifierKey: string;
    partnerId: string;
    receivedAt: Date;
  }): Promise<boolean>;
}

export interface HandlerDependencies extends ResolutionDependencies {
  chart: ChartAccess;
  identities: ResolutionDependencies['identities'] & { put(identity: PartnerIdentity, previous: PartnerIdentity | undefined): Promise<PartnerIdentity> };
  held: { hold(record: Omit<HeldRecord, 'state'>): Promise<boolean> };
  labResults: ReceiveDependencies;
  merges: MergeReviews;
  /** the partner's holding relationships with chart patients (lib/relationships/relationship-wiring.ts relationshipLookup) */
  relationships: RelationshipLookup;
  /** the TXA-12 document numbers each partner used (lib/intake/document-numbers.ts) */
  documentNumbers: {
    claim(partnerId: string, documentNumber: string, fingerprint: string, now: Date): Promise<DocumentNumberUse>;
    replace(partnerId: string, documentNumber: string, fingerprint: string, now: Date): Promise<void>;
  };
}

export interface HandlerContext {
  principal: Principal;
  requestId: string;
  now: Date;
  /** MSH-3 the service writes in its own exports (its summary's chart-record groups are not lab results) */
  ownApplication: string;
}

export const SUPPORTED_EVENTS: Readonly<Record<string, readonly string[]>> = {
  ORU: ['R01'],
  ADT: ['A01', 'A04', 'A08', 'A28', 'A31', 'A40'],
  MDM: ['T02', 'T08', 'T10'],
};

export async function handleMessage(message: ParsedMessage, services: HandlerDependencies, context: HandlerContext): Promise<HandledMessage> {
  const msh = message.segments[0]!;
  const code = valueAt(msh, 9, 1);
  const event = valueAt(msh, 9, 2) || valueAt(firstSegment(message, 'EVN'), 1);
  if (code === 'ORU' && event === 'R01') return handleOru(message, services, context);
  if (code === 'ADT' && event === 'A40') return handleMerge(message, services, context);
  if (code === 'ADT' && SUPPORTED_EVENTS.ADT!.includes(event)) return handleAdt(message, services, context);
  if (code === 'MDM' && SUPPORTED_EVENTS.MDM!.includes(event)) return handleMdm(message, event, services, context);
  return reject(
    'AR',
    ErrorCodes.unsupportedMessageType,
    'unsupported message type: this endpoint takes ORU^R01, ADT^A01/A04/A08/A28/A31/A40 and MDM^T02/T08/T10',
    {
      segmentId: 'MSH',
      segmentSequence: 1,
      field: 9,
    },
  );
}

/** The record's provenance: the key's partner, MSH-4, MSH-10, the receipt time. */
function provenanceOf(message: ParsedMessage, context: HandlerContext): Provenance {
  const msh = message.segments[0]!;
  return { partnerId: context.principal.partnerId, sender: valueAt(msh, 4), sourceMessageId: valueAt(msh, 10), receivedAt: context.now.toISOString() };
}

/** Record-rule problems as an AE located in the message (`locate` maps a record path to a field). */
function refuseProblems(problems: ReadonlyArray<{ path: string; message: string }>, locate: (path: string) => ErrorLocation): void {
  if (problems.length === 0) return;
  throw new AckRejection(
    'AE',
    problems
      .slice(0, 20)
      .map((problem) => ({ code: ErrorCodes.dataType, message: `${problem.path}: ${problem.message}`.slice(0, 200), location: locate(problem.path) })),
  );
}

/** `hl7-` + 128 bits of the sender's keyed identity: the result patient id of a person not resolved to the chart. */
export function patientIdFor(identityKey: string): string {
  return `hl7-${identityKey.slice(identityKey.indexOf('#') + 1).slice(0, 32)}`;
}

/** A held id for a record: receipt time + a keyed hash of what makes it one record. */
async function heldId(services: HandlerDependencies, context: HandlerContext, parts: string[]): Promise<string> {
  const keys = await services.keys();
  return heldIdFor(context.now.toISOString(), keys.patientIdentifierKey('held', parts.join('\u0000')));
}

// ---- ORU^R01 ----

const CHART_RECORD_GROUPS = new Set(['NOTE', 'ENCOUNTER', 'NO_RECORDS']);

interface ObservationGroup {
  pid: ParsedSegment | undefined;
  /** the ORC before the OBR, if any (ORC-2: the placer order number when OBR-2 is empty) */
  orc?: ParsedSegment;
  obr: ParsedSegment;
  obx: ParsedSegment[];
  /** NTE segments of the group, each with the OBX it follows (undefined: it follows the OBR) */
  notes: Array<{ nte: ParsedSegment; obx?: ParsedSegment }>;
  /** the first SPM of the order (2.5+) */
  spm?: ParsedSegment;
}

function observationGroups(message: ParsedMessage): ObservationGroup[] {
  const groups: ObservationGroup[] = [];
  let pid: ParsedSegment | undefined;
  let orc: ParsedSegment | undefined;
  let current: ObservationGroup | undefined;
  for (const segment of message.segments) {
    if (segment.name === 'PID') {
      pid = segment;
      orc = undefined;
      current = undefined;
    } else if (segment.name === 'ORC') {
      orc = segment;
      current = undefined;
    } else if (segment.name === 'OBR') {
      current = { pid, ...(orc ? { orc } : {}), obr: segment, obx: [], notes: [] };
      orc = undefined;
      groups.push(current);
    } else if (segment.name === 'OBX' && current) {
      current.obx.push(segment);
    } else if (segment.name === 'NTE' && current) {
      current.notes.push({ nte: segment, obx: current.obx[current.obx.length - 1] });
    } else if (segment.name === 'SPM' && current) {
      current.spm ??= segment;
    }
  }
  return groups;
}

function obxText(obx: ParsedSegment): string {
  const type = valueAt(obx, 2).toUpperCase();
  const reps = obx.fields[5] ?? [];
  const joinComponents = (rep: string[][]) => rep.map((c) => c.join('&')).join('^');
  switch (type) {
    case 'TX':
    case 'FT':
      return reps.map((rep) => rep.map((c) => c.join('')).join('')).join('\n');
    case 'CE':
    case 'CWE':
    case 'CNE':
      return reps.map((rep) => present(rep[1]?.[0]) ?? rep[0]?.[0] ?? '').join(', ');
    case 'SN':
      return reps.map((rep) => rep.map((c) => c[0] ?? '').join('')).join(', ');
    case 'NM':
    case 'ST':
    case 'DT':
    case 'TM':
    case 'TS':
    case 'DTM':
    case 'ID':
    case 'IS':
      return reps.map((rep) => rep[0]?.[0] ?? '').join(', ');
    default:
      return reps.map(joinComponents).join('~');
  }
}

/** The text of an NTE (NTE-3 repetitions are lines); undefined when blank. */
function nteText(nte: ParsedSegment): string | undefined {
  const text = repetitionsOf(nte, 3)
    .map((rep) => rep.map((c) => c.join('')).join(''))
    .join('\n');
  return text.trim() === '' ? undefined : text;
}

/** The NTE segments after the OBR (`obx` undefined) or after one OBX, blank ones left out. */
function notesOf(group: ObservationGroup, obx: ParsedSegment | undefined): Array<{ nte: ParsedSegment; text: string }> {
  return group.notes
    .filter((note) => note.obx === obx)
    .map(({ nte }) => ({ nte, text: nteText(nte) }))
    .filter((note): note is { nte: ParsedSegment; text: string } => note.text !== undefined);
}

const RESULT_CODE = /^[!-~]([ -~]*[!-~])?$/;
const CODE_SYSTEM = /^[A-Za-z0-9][A-Za-z0-9.-]*$/;
/** lab-result.schema.json `coding.system` */
const CODING_SYSTEM = /^[A-Za-z0-9][A-Za-z0-9._+-]*$/;
/** lab-result.schema.json `decimal` (HL7 NM) */
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
const VALUE_TYPE = /^[A-Z][A-Z0-9]{1,2}$/;
const UCUM_CODE = /^[!-~]{1,64}$/;
const SN_COMPARATORS = new Set(['<', '>', '<=', '>=', '=', '<>']);
const SN_SEPARATORS = new Set(['-', ':', '/', '+']);

/** `code` and `codeSystem` of a lab test from OBX-3.1 and OBX-3.3, each kept only when the lab schema accepts it. */
function codedTest(code: string, system: string): { code?: string; codeSystem?: string } {
  if (!(code.length <= 64 && RESULT_CODE.test(code))) return {};
  return system.length <= 20 && CODE_SYSTEM.test(system) ? { code, codeSystem: system } : { code };
}

/**
 * A CE/CWE triplet (code^text^system starting at component `first`, 1-based) as a Coding; undefined
 * without a code. A display or system the schema would refuse (too long, a system that is no table
 * 0396 name) is left out of the Coding; the code is what identifies it.
 */
function codingOf(components: string[][] | undefined, first = 1): Coding | undefined {
  const code = present(components?.[first - 1]?.[0])?.trim();
  if (!code || code.length > 64) return undefined;
  const display = present(components?.[first]?.[0]);
  const system = present(components?.[first + 1]?.[0])?.trim();
  return compact({
    code,
    display: display && display.length <= 199 ? display : undefined,
    system: system && system.length <= 32 && CODING_SYSTEM.test(system) ? system : undefined,
  });
}

/** An EI (id^namespace id^universal id^type) as components or subcomponents: the namespace is EI-2, else EI-3. */
function entityIdentifierOf(parts: Array<string | undefined>): EntityIdentifier | undefined {
  const id = present(parts[0]);
  if (!id) return undefined;
  return compact({ id, namespace: present(parts[1]) ?? present(parts[2]) });
}

const eiComponents = (components: string[][] | undefined): Array<string | undefined> => (components ?? []).map((c) => c[0]);

/** A text of at most `max` characters as sent, else undefined (a part the lab schema would refuse is left out, as codingOf does). */
const within = (value: string | undefined, max: number): string | undefined => {
  const text = present(value);
  return text !== undefined && text.length <= max ? text : undefined;
};

/**
 * An identifier with its assigning authority as sent: `id`, the HD subcomponents (namespace&universal
 * id&type) and the identifier type code (XON-10/6/7, XCN-1/9/13); undefined without an id.
 */
function assignedIdentifierOf(id: string | undefined, authority: string[] | undefined, type: string | undefined): AssignedIdentifier | undefined {
  const value = within(id, 199);
  if (value === undefined) return undefined;
  return compact({
    id: value,
    namespace: within(authority?.[0], 199),
    universalId: within(authority?.[1], 199),
    universalIdType: within(authority?.[2], 20),
    type: within(type, 20),
  });
}

/**
 * OBX-23 (XON), OBX-24 (XAD), OBX-25 (XCN) as sent: the performing organization's name, its identifier
 * (XON-10, else XON-3 of v2.3/2.4, with XON-6 and XON-7), its address and its medical director.
 */
function performingOrganizationOf(obx: ParsedSegment): Partial<LabTestSummary> {
  const xon = obx.fields[23]?.[0];
  const xad = obx.fields[24]?.[0];
  const xcn = obx.fields[25]?.[0];
  const street = compact({ ...(address(xad) ?? {}), type: within(xad?.[6]?.[0], 20), county: within(xad?.[8]?.[0], 20) });
  const lines = Object.fromEntries(Object.entries(street).filter(([, v]) => typeof v === 'string' && v.length <= 199)) as LabAddress;
  // a name part longer than the lab model takes is left out (these fields were not kept before: never a refusal)
  const sent = personName(xcn?.slice(1));
  const name =
    sent && sent.family.length <= 194
      ? compact({
          ...sent,
          given: within(sent.given, 199),
          middle: within(sent.middle, 199),
          prefix: within(sent.prefix, 199),
          suffix: within(sent.suffix, 199),
        })
      : undefined;
  const director: LabPerson = compact({ identifier: assignedIdentifierOf(xcn?.[0]?.[0], xcn?.[8], xcn?.[12]?.[0]), name });
  return compact({
    performingOrganization: present(valueAt(obx, 23, 1)),
    performingOrganizationIdentifier: assignedIdentifierOf(present(xon?.[9]?.[0]) ?? xon?.[2]?.[0], xon?.[5], xon?.[6]?.[0]),
    performingOrganizationAddress: Object.keys(lines).length > 0 ? lines : undefined,
    performingOrganizationDirector: Object.keys(director).length > 0 ? director : undefined,
  });
}

/** The typed value of an OBX (issue 27): NM as written, SN parts, a CWE/CE coding, TX/FT lines. */
function typedValue(obx: ParsedSegment, type: string): Partial<LabTestSummary> {
  const first = obx.fields[5]?.[0];
  switch (type) {
    case 'NM': {
      const value = (first?.[0]?.[0] ?? '').trim();
      return DECIMAL.test(value) && value.length <= 32 ? { numericValue: value } : {};
    }
    case 'SN': {
      const [comparator, value1, separator, value2] = [0, 1, 2, 3].map((i) => present(first?.[i]?.[0])?.trim());
      const ok =
        (comparator === undefined || SN_COMPARATORS.has(comparator)) &&
        (value1 === undefined || (DECIMAL.test(value1) && value1.length <= 32)) &&
        // `+` is categorical (`^2^+`: 2+ on a scale) and has no second value; a range or ratio needs one
        (separator === undefined || (SN_SEPARATORS.has(separator) && (separator === '+' || value2 !== undefined))) &&
        (value2 === undefined || (DECIMAL.test(value2) && value2.length <= 32));
      const sn = compact({ comparator, value1, separator, value2 });
      return ok && Object.keys(sn).length > 0 ? { structuredNumeric: sn } : {};
    }
    case 'CE':
    case 'CWE':
    case 'CNE': {
      const coded = codingOf(first);
      return coded ? compact({ codedValue: coded, codedValueAlternate: codingOf(first, 4) }) : {};
    }
    case 'TX':
    case 'FT': {
      const lines = (obx.fields[5] ?? []).map((rep) => rep.map((c) => c.join('')).join(''));
      return lines.some((line) => line !== '') ? { textLines: lines } : {};
    }
    default:
      return {};
  }
}

/** OBX-6: `units` as displayed (OBX-6.2 beside a UCUM code, else OBX-6.1, else OBX-6.2) and `unitsCode` when OBX-6.3 is UCUM. */
function unitsOf(obx: ParsedSegment): { units?: string; unitsCode?: string } {
  const id = present(valueAt(obx, 6, 1));
  const text = present(valueAt(obx, 6, 2));
  const ucum = valueAt(obx, 6, 3).trim().toUpperCase() === 'UCUM' && id !== undefined && UCUM_CODE.test(id);
  return compact({ units: ucum ? (text ?? id) : (id ?? text), unitsCode: ucum ? id : undefined });
}

/** A lab time as the lab wrote it (an hour without minutes stays an hour: `2024030110-0500` -> `2024-03-01T10-05:00`). */
const labTime = (value: string, timeZone: string): string | undefined => partialFromTs(value, timeZone, true);

/** OBX-4 as the lab model takes it (ST of 1-20 printable ASCII characters, schemas/lab-result.schema.json), else left out: it was not taken before, so it never refuses a message. */
function printableSubId(value: string | undefined): string | undefined {
  const subId = value?.trim();
  return subId !== undefined && subId.length <= 20 && /^[!-~]([ -~]*[!-~])?$/.test(subId) ? subId : undefined;
}

/** The lab times intake reads of an OBR group: OBR-7/8/22, each OBX-14/19, SPM-17. */
const LAB_TIME_FIELDS: ReadonlyArray<{ segment: 'OBR' | 'OBX' | 'SPM'; field: number }> = [
  { segment: 'OBR', field: 7 },
  { segment: 'OBR', field: 8 },
  { segment: 'OBR', field: 22 },
  { segment: 'OBX', field: 14 },
  { segment: 'OBX', field: 19 },
  { segment: 'SPM', field: 17 },
];

/**
 * The lab times of a group that were sent but are no real time (a day the calendar does not have,
 * hour 24, second 60, an offset beyond ±1400 or with minutes over 59, `Z`, more than 4 fraction
 * digits): intake leaves them out (docs/hl7-intake.md; OBR-22 falls back to OBR-7, then the first
 * OBX-14, then MSH-7) and says so in the ACK, one ERR (102, severity W) per field, so no time is
 * replaced without the lab being told. The result is filed (AA).
 */
function leftOutLabTimes(group: ObservationGroup, timeZone: string): AckError[] {
  const segments = { OBR: [group.obr], OBX: group.obx, SPM: group.spm ? [group.spm] : [] };
  const warnings: AckError[] = [];
  for (const { segment, field } of LAB_TIME_FIELDS) {
    for (const parsed of segments[segment]) {
      const value = valueAt(parsed, field);
      if (!present(value) || labTime(value, timeZone) !== undefined) continue;
      const fallback = segment === 'OBR' && field === 22 ? '; ResultedDateUTC from the next time sent (OBR-7, OBX-14, MSH-7)' : '';
      warnings.push({
        code: ErrorCodes.dataType,
        severity: 'W',
        message: `${segment}-${field} is no valid HL7 date-time (YYYY[MM[DD[HH[MM[SS[.S[S[S[S]]]]]]]]][+/-ZZZZ]): left out${fallback}`,
        location: { segmentId: segment, segmentSequence: parsed.sequence, field },
      });
    }
  }
  return warnings;
}

/** An ACK carries at most this many warnings (a sample with a bad date in every OBX would make hundreds). */
const MAX_ACK_WARNINGS = 20;

/** The first warnings, the last one saying how many more fields were left out the same way. */
function atMostWarnings(warnings: AckError[]): AckError[] {
  if (warnings.length <= MAX_ACK_WARNINGS) return warnings;
  const more = warnings.length - (MAX_ACK_WARNINGS - 1);
  return [
    ...warnings.slice(0, MAX_ACK_WARNINGS - 1),
    { code: ErrorCodes.dataType, severity: 'W', message: `${more} more lab times that are no valid HL7 date-time were left out` },
  ];
}

/** The order facts of an OBR group (ORC/OBR/SPM, NTE after the OBR). */
function orderOf(group: ObservationGroup, accessionField: 2 | 3, timeZone: string, resultedAt: string): LabOrder | undefined {
  const { obr, orc, spm } = group;
  const specimenId = spm?.fields[2]?.[0];
  // OBR-15 (SPS, v2.3/2.4): specimen source code as subcomponents code&text&system of component 1
  const obr15 = obr.fields[15]?.[0]?.[0];
  const specimen = compact({
    type: codingOf(spm?.fields[4]?.[0]) ?? (obr15 ? codingOf(obr15.map((sub) => [sub])) : undefined),
    collectedAt: labTime(valueAt(spm, 17), timeZone),
    id: entityIdentifierOf(specimenId?.[1] ?? []) ?? entityIdentifierOf(specimenId?.[0] ?? []),
  });
  const comments = notesOf(group, undefined).map((note) => note.text);
  const order = compact({
    placerOrderNumber: entityIdentifierOf(eiComponents(obr.fields[2]?.[0])) ?? entityIdentifierOf(eiComponents(orc?.fields[2]?.[0])),
    accessionNamespace: present(valueAt(obr, accessionField, 2)) ?? present(valueAt(obr, accessionField, 3)),
    universalService: codingOf(obr.fields[4]?.[0]) ?? codingOf(obr.fields[4]?.[0], 4),
    collectedAt: labTime(valueAt(obr, 7), timeZone),
    // OBR-8 only when it is a real time not before OBR-7 (a keying error there does not refuse the result)
    collectedEndAt: acceptableCollectionEnd(labTime(valueAt(obr, 7), timeZone), labTime(valueAt(obr, 8), timeZone), new Date()),
    // OBR-22 as the lab wrote it (offset and precision kept) when ResultedDateUTC, its instant in UTC, does not say it already
    reportedAt: [labTime(valueAt(obr, 22), timeZone)].find((at) => at !== resultedAt),
    orderingProvider: clinician(obr.fields[16]?.[0]),
    orderStatus: present(valueAt(obr, 25)),
    specimen: Object.keys(specimen).length > 0 ? specimen : undefined,
    comments: comments.length > 0 ? comments : undefined,
  });
  return Object.keys(order).length > 0 ? order : undefined;
}

function obxName(obx: ParsedSegment): string {
  // only the alternate triplet sent (OBX-3.4-6): its text, else its code (the exports keep the primary empty: issue 27 K5)
  return (
    present(valueAt(obx, 3, 2)) ??
    present(valueAt(obx, 3, 1)) ??
    present(valueAt(obx, 3, 5)) ??
    present(valueAt(obx, 3, 4)) ??
    `Observation ${valueAt(obx, 1) || obx.sequence}`
  );
}

/**
 * The lab result body (the JSON of POST /receiveTestData) an OBR group maps to: the spec's fields as
 * before (`result` the text a reader shows) plus, per issue 27, `order` (ORC/OBR/SPM/NTE) and per
 * OBX its codes, typed value, units code, flags, status, time, performing organisation and comments.
 * A time stamp without an offset is a wall-clock time in `timeZone` (the sending partner's zone).
 */
function labBody(group: ObservationGroup, sender: string, patientId: string, message: ParsedMessage, timeZone: string = DEFAULT_TIME_ZONE) {
  const zone = isTimeZone(timeZone) ? timeZone : DEFAULT_TIME_ZONE;
  const obrLocation = (field: number): ErrorLocation => ({ segmentId: 'OBR', segmentSequence: group.obr.sequence, field });
  const filler = present(valueAt(group.obr, 3));
  const accession = filler ?? present(valueAt(group.obr, 2));
  if (!accession) reject('AE', ErrorCodes.requiredFieldMissing, 'OBR-3 (or OBR-2) must carry the accession number', obrLocation(3));
  const statusText = present(valueAt(group.obr, 25)) ?? present(valueAt(group.obx[0], 11));
  if (!statusText) reject('AE', ErrorCodes.requiredFieldMissing, 'OBR-25 result status is required (table 0123)', obrLocation(25));
  const status = resultStatusFromTable0123(statusText);
  if (!status.ok && status.reason === 'not-a-result')
    reject('AE', ErrorCodes.tableValueNotFound, 'OBR-25 Y / Z (no order / patient on record) answers a query: no result', obrLocation(25));
  if (!status.ok)
    reject('AE', ErrorCodes.tableValueNotFound, `OBR-25 result status must be a table 0123 value (${TABLE_0123_VALUES.join(', ')})`, obrLocation(25));
  // results reported at (OBR-22), else observed at (OBR-7), else the first OBX-14, else the message time
  const timeCandidates = [valueAt(group.obr, 22), valueAt(group.obr, 7), valueAt(group.obx[0], 14), valueAt(message.segments[0], 7)].filter((t) => present(t));
  const resultedAt = timeCandidates.map((t) => instantFromTs(t, zone)).find((t) => t !== undefined);
  if (!resultedAt) reject('AE', ErrorCodes.dataType, 'OBR-22 / OBR-7 must be a valid HL7 date-time', obrLocation(present(valueAt(group.obr, 22)) ? 22 : 7));

  const results: Record<string, unknown>[] = [];
  const reports: Record<string, unknown>[] = [];
  for (const obx of group.obx) {
    const type = valueAt(obx, 2).trim().toUpperCase();
    const testName = obxName(obx);
    const flags = repetitionsOf(obx, 8)
      .map((rep) => (rep[0]?.[0] ?? '').trim())
      .filter(Boolean);
    const comments = notesOf(group, obx).map((note) => note.text);
    // OBX-3 as the lab result's code and coding system (table 0396 name), when they are well formed:
    // the exports write them back in OBX-3 (a LOINC code stays LOINC through the round trip)
    const coded = codedTest(valueAt(obx, 3, 1), valueAt(obx, 3, 3));
    const extras = compact({
      valueType: VALUE_TYPE.test(type) ? type : undefined,
      ...coded,
      // OBX-3 `code^^LN`: no name sent; testName repeats the code for readers, the exports write no display
      testNameFrom: coded.code !== undefined && present(valueAt(obx, 3, 2)) === undefined && testName === coded.code ? ('code' as const) : undefined,
      alternateCode: codingOf(obx.fields[3]?.[0], 4),
      abnormalFlags: flags.length > 0 ? flags : undefined,
      observationStatus: present(valueAt(obx, 11))?.trim(),
      observedAt: labTime(valueAt(obx, 14), zone),
      analyzedAt: labTime(valueAt(obx, 19), zone),
      // OBX-4 as the v2.5.1 ST it is (v2.7's OG `^1^1`, components, has no v2.5.1 form: not kept)
      subId: (obx.fields[4]?.[0]?.length ?? 0) === 1 && (obx.fields[4]?.length ?? 0) === 1 ? printableSubId(valueAt(obx, 4)) : undefined,
      ...performingOrganizationOf(obx),
      comments: comments.length > 0 ? comments : undefined,
    });
    if (type === 'ED') {
      const encoding = valueAt(obx, 5, 4).toLowerCase();
      const data = valueAt(obx, 5, 5);
      if (!data) {
        // an ED placeholder without data: recorded as an observation without a document
        results.push({ testName, result: '', ...extras });
        continue;
      }
      const mime = [valueAt(obx, 5, 2), valueAt(obx, 5, 3)].filter(Boolean).join('/') || 'application/octet-stream';
      reports.push({ source: encoding === 'base64' ? 'base64' : encoding || 'text', type: mime.slice(0, 64), name: testName.slice(0, 255), data });
      results.push({ testName, result: '', ...extras });
      continue;
    }
    if (type === 'RP') {
      const pointer = valueAt(obx, 5, 1);
      if (pointer)
        reports.push({
          source: 'reference',
          type: ([valueAt(obx, 5, 3), valueAt(obx, 5, 4)].filter(Boolean).join('/') || 'reference').slice(0, 64),
          name: testName.slice(0, 255),
          data: pointer,
        });
      results.push({ testName, result: '', ...extras });
      continue;
    }
    results.push(
      compact({
        testName,
        result: obxText(obx),
        ...unitsOf(obx),
        referenceRange: present(valueAt(obx, 7)),
        ...extras,
        ...typedValue(obx, type),
      }),
    );
  }
  return {
    data: compact({
      senderID: sender,
      patientID: patientId,
      accessionNumber: accession,
      status: status.submitted,
      ResultedDateUTC: resultedAt,
      results,
      reports: reports.length > 0 ? reports : undefined,
      order: orderOf(group, filler ? 3 : 2, zone, resultedAt),
    }),
  };
}

const OBX_FIELDS: Record<string, number> = {
  testName: 3,
  code: 3,
  codeSystem: 3,
  alternateCode: 3,
  valueType: 2,
  units: 6,
  unitsCode: 6,
  referenceRange: 7,
  abnormalFlags: 8,
  observationStatus: 11,
  observedAt: 14,
  analyzedAt: 19,
  subId: 4,
  performingOrganization: 23,
  performingOrganizationIdentifier: 23,
  performingOrganizationAddress: 24,
  performingOrganizationDirector: 25,
  testNameFrom: 3,
};
const ORDER_FIELDS: Record<string, number> = {
  placerOrderNumber: 2,
  accessionNamespace: 3,
  universalService: 4,
  collectedAt: 7,
  collectedEndAt: 8,
  reportedAt: 22,
  orderingProvider: 16,
  orderStatus: 25,
};

/** A validation failure of the lab result, located in the message (pointer -> segment/field). */
function locate(pointer: string, group: ObservationGroup): ErrorLocation {
  const obr = (field: number): ErrorLocation => ({ segmentId: 'OBR', segmentSequence: group.obr.sequence, field });
  const nte = (obx: ParsedSegment | undefined, index: string | undefined): ErrorLocation => {
    const note = notesOf(group, obx)[Number(index ?? 0)];
    return { segmentId: 'NTE', segmentSequence: note?.nte.sequence ?? 1, field: 3 };
  };
  if (pointer.startsWith('/data/status')) return obr(25);
  if (pointer.startsWith('/data/ResultedDateUTC')) return obr(22);
  if (pointer.startsWith('/data/accessionNumber')) return obr(3);
  if (pointer.startsWith('/data/patientID')) return { segmentId: 'PID', segmentSequence: group.pid?.sequence ?? 1, field: 3 };
  if (pointer.startsWith('/data/senderID')) return { segmentId: 'MSH', segmentSequence: 1, field: 4 };
  const order = /^\/data\/order(?:\/(\w+))?(?:\/(\w+))?/.exec(pointer);
  if (order) {
    if (order[1] === 'comments') return nte(undefined, order[2]);
    if (order[1] === 'specimen') {
      if (!group.spm) return obr(15);
      return { segmentId: 'SPM', segmentSequence: group.spm.sequence, field: order[2] === 'collectedAt' ? 17 : order[2] === 'id' ? 2 : 4 };
    }
    return obr(ORDER_FIELDS[order[1] ?? ''] ?? 2);
  }
  const item = /^\/data\/(results|reports)\/(\d+)(?:\/(\w+))?(?:\/(\d+))?/.exec(pointer);
  if (item) {
    const obx = group.obx[Number(item[2])];
    if (item[1] === 'results' && item[3] === 'comments') return nte(obx, item[4]);
    const field = (item[1] === 'results' && OBX_FIELDS[item[3] ?? '']) || 5;
    return { segmentId: 'OBX', segmentSequence: obx?.sequence ?? 1, field };
  }
  return obr(1);
}

async function handleOru(message: ParsedMessage, services: HandlerDependencies, context: HandlerContext): Promise<HandledMessage> {
  const msh = message.segments[0]!;
  const sender = valueAt(msh, 4);
  const ownExport = valueAt(msh, 3) === context.ownApplication;
  const groups = observationGroups(message).filter((group) => {
    if (group.obx.length === 0) return false; // an order without observations is no result
    const serviceCode = valueAt(group.obr, 4, 1);
    if (valueAt(group.obr, 4, 3) === 'L' && CHART_RECORD_GROUPS.has(serviceCode)) return false;
    // the service's own summary carries chart records (assessments...) as groups; only its LAB groups are lab results
    return !(ownExport && serviceCode !== 'LAB');
  });
  if (groups.length === 0) reject('AE', ErrorCodes.segmentSequence, 'the message holds no OBR with OBX observations', { segmentId: 'OBR' });
  const bodies: Array<{ group: ObservationGroup; body: unknown; resolution: Resolution }> = [];
  const zone = isTimeZone(context.principal.timeZone ?? '') ? context.principal.timeZone! : DEFAULT_TIME_ZONE;
  const warnings = atMostWarnings(groups.flatMap((group) => leftOutLabTimes(group, zone)));
  const resolutions = new Map<ParsedSegment | undefined, Resolution>();
  for (const group of groups) {
    let resolution = resolutions.get(group.pid);
    if (!resolution) {
      const named = await resolvePatient(group.pid, context.principal.partnerId, services);
      resolution = await requireRelationship(named, context.principal.partnerId, services.relationships, context.now);
      resolutions.set(group.pid, resolution);
    }
    const body = labBody(group, sender, resolution.patientId ?? patientIdFor(resolution.identityKey), message, context.principal.timeZone);
    try {
      acceptLabResult(body, context.now);
    } catch (error) {
      if (!(error instanceof ValidationFailedError)) throw error;
      const errors = error.errors.slice(0, 20).map((fieldError) => {
        const pointer = 'pointer' in fieldError ? fieldError.pointer : '';
        return {
          code: pointer.startsWith('/data/status') ? ErrorCodes.tableValueNotFound : ErrorCodes.dataType,
          message: `${pointer.replace('/data/', '')}: ${fieldError.message}`.slice(0, 200),
          location: locate(pointer, group),
        };
      });
      throw new AckRejection(
        'AE',
        errors.length > 0 ? errors : [{ code: ErrorCodes.dataType, message: 'the lab result failed validation', location: locate('', group) }],
      );
    }
    bodies.push({ group, body, resolution });
  }
  const resultIds: string[] = [];
  const heldResults = new Map<Resolution, string[]>();
  let patientId: string | undefined;
  for (const { body, resolution } of bodies) {
    const outcome = await receiveLabResult(
      { body, principal: context.principal, requestId: context.requestId, requestIdSupplied: false, sourceMessageId: valueAt(msh, 10), now: context.now },
      services.labResults,
    );
    resultIds.push(outcome.body.resultId);
    if (resolution.patientId) patientId ??= resolution.patientId;
    else heldResults.set(resolution, [...(heldResults.get(resolution) ?? []), outcome.body.resultId]);
  }
  // results of a person not resolved to the chart wait for a reviewer (stored, encrypted, under the sender's patient id)
  let held = 0;
  for (const [resolution, ids] of heldResults) {
    const id = await heldId(services, context, ['lab-result', context.principal.partnerId, valueAt(msh, 10), resolution.identityKey]);
    await services.held.hold({
      heldId: id,
      provenance: provenanceOf(message, context),
      person: resolution.person,
      body: { kind: 'lab-result', resultIds: ids },
      reason: resolution.reason ?? 'patient-unresolved',
    });
    held += ids.length;
  }
  return {
    ...(warnings.length > 0 ? { warnings } : {}),
    audit: {
      action: 'hl7.oru.results_store',
      ...(patientId ? { patientId } : {}),
      resourceIds: { resultIds: resultIds.join(','), count: String(resultIds.length), held: String(held) },
    },
  };
}

// ---- ADT ----

function patientFrom(message: ParsedMessage, base: Patient): Patient {
  const pid = firstSegment(message, 'PID');
  const pd1 = firstSegment(message, 'PD1');
  const name = personName(pid?.fields[5]?.[0]);
  const birthDate = dateFromDt(valueAt(pid, 7));
  const sexText = valueAt(pid, 8);
  const sex = ['A', 'F', 'M', 'N', 'O', 'U'].includes(sexText) ? (sexText as Patient['sex']) : undefined;
  const { phone, email } = telecoms(pid, 13);
  const nextOfKin = message.segments
    .filter((segment) => segment.name === 'NK1')
    .map((nk1) => {
      const kinName = personName(nk1.fields[2]?.[0]);
      if (!kinName) return undefined;
      return compact({ name: kinName, relationship: codedValue(nk1.fields[3]?.[0]), phone: telecoms(nk1, 5).phone });
    })
    .filter((kin): kin is NonNullable<typeof kin> => kin !== undefined);
  return compact({
    ...base,
    name: name ?? base.name,
    birthDate: birthDate ?? base.birthDate,
    sex: sex ?? base.sex,
    address: address(pid?.fields[11]?.[0]) ?? base.address,
    phone: phone ?? base.phone,
    email: email ?? base.email,
    race: codedValue(pid?.fields[10]?.[0]) ?? base.race,
    language: codedValue(pid?.fields[15]?.[0]) ?? base.language,
    maritalStatus: codedValue(pid?.fields[16]?.[0]) ?? base.maritalStatus,
    ethnicity: codedValue(pid?.fields[22]?.[0]) ?? base.ethnicity,
    primaryCareProvider: clinician(pd1?.fields[4]?.[0]) ?? base.primaryCareProvider,
    nextOfKin: nextOfKin.length > 0 ? nextOfKin : base.nextOfKin,
  });
}

function checkSender(message: ParsedMessage, context: HandlerContext): void {
  const sender = valueAt(message.segments[0], 4);
  if (!sender || !senderAllowed(context.principal, sender)) {
    reject('AR', ErrorCodes.unknownKeyIdentifier, 'MSH-4 sending facility is not a sender this API key may submit for', {
      segmentId: 'MSH',
      segmentSequence: 1,
      field: 4,
    });
  }
}

/** ADT demographics with a problem path -> the PID/NK1 field it came from. */
function locateDemographics(path: string): ErrorLocation {
  const field = path.startsWith('name')
    ? 5
    : path.startsWith('birthDate')
      ? 7
      : path.startsWith('address')
        ? 11
        : path.startsWith('nextOfKin')
          ? 2
          : path.startsWith('phone') || path.startsWith('email')
            ? 13
            : 3;
  return { segmentId: path.startsWith('nextOfKin') ? 'NK1' : 'PID', segmentSequence: 1, field };
}

async function handleAdt(message: ParsedMessage, services: HandlerDependencies, context: HandlerContext): Promise<HandledMessage> {
  const pid = firstSegment(message, 'PID');
  const identifiers = pidIdentifiers(pid);
  const partnerId = context.principal.partnerId;
  const own = await checkNamespaces(identifiers, partnerId, services, pid!);
  const keys = await services.keys();
  const identityKey = senderIdentityKey(keys, partnerId, own, identifiers);
  const existing = await services.identities.get(identityKey);
  const chosen = own[0] ?? identifiers[0]!;
  const name = personName(pid?.fields[5]?.[0]);
  if (!existing && !name)
    reject('AE', ErrorCodes.requiredFieldMissing, 'PID-5 patient name (family name) is required for a new patient', {
      segmentId: 'PID',
      segmentSequence: 1,
      field: 5,
    });
  const base: Patient = existing
    ? { patientId: 'partner-identity', ...existing.demographics }
    : { patientId: 'partner-identity', mrn: chosen.value, assigningAuthority: chosen.authority, name: name! };
  const { patientId: _placeholder, ...demographics } = patientFrom(message, { ...base, mrn: chosen.value, assigningAuthority: chosen.authority });
  // a partner may send an MRN without an assigning authority (its local namespace): nothing to check then
  const { assigningAuthority, ...checked } = demographics;
  refuseProblems(
    checkPatientValues({ ...checked, ...(assigningAuthority ? { assigningAuthority } : {}), patientId: 'partner-identity' }, context.now),
    locateDemographics,
  );
  // PV1/DG1/AL1: the partner's own records of the visit and the person's problems, checked before anything is stored
  const content = adtContentFrom(message, context.principal.timeZone);
  refuseProblems(adtContentProblems(content, context.now), locateAdtContent);

  // linked only when the chart MRN is named and the demographics (birth date included) agree
  let linkedPatientId: string | undefined;
  let reason: Resolution['reason'] = 'patient-unresolved';
  const { patient: chartPatient } = await findChartPatient(identifiers, keys, services);
  if (chartPatient && demographicsAgree(chartPatient, demographics, true)) {
    // a link lets the partner's later ORU/MDM name the patient: only for a patient the partner is related to
    if (await mayFileForPatient(partnerId, chartPatient.patientId, services.relationships, context.now)) linkedPatientId = chartPatient.patientId;
    else reason = 'no-relationship';
  } else if (chartPatient) reason = 'demographics-differ';
  const stored = await services.identities.put(
    {
      identityKey,
      partnerId,
      demographics,
      ...withAdtContent(existing, content),
      provenance: provenanceOf(message, context),
      ...(linkedPatientId ? { linkedPatientId, linkedBy: 'matched' as const } : {}),
    },
    existing,
  );
  if (!stored.linkedPatientId) {
    await services.held.hold({
      heldId: await heldId(services, context, ['identity', identityKey, valueAt(message.segments[0], 10)]),
      provenance: provenanceOf(message, context),
      person: claimedPerson(pid, identifiers),
      body: { kind: 'identity', identityKey },
      reason,
    });
  }
  const event = valueAt(message.segments[0], 9, 2) || valueAt(firstSegment(message, 'EVN'), 1);
  return {
    audit: {
      action: 'hl7.adt.partner_identity',
      ...(stored.linkedPatientId ? { patientId: stored.linkedPatientId } : {}),
      resourceIds: { event, linked: String(Boolean(stored.linkedPatientId)), created: String(!existing) },
    },
  };
}

async function handleMerge(message: ParsedMessage, services: HandlerDependencies, context: HandlerContext): Promise<HandledMessage> {
  const pid = firstSegment(message, 'PID');
  const mrg = firstSegment(message, 'MRG');
  const priorMrn = present(valueAt(mrg, 1, 1));
  if (!priorMrn)
    reject('AE', ErrorCodes.requiredFieldMissing, 'MRG-1 prior patient identifier is required for a merge', { segmentId: 'MRG', segmentSequence: 1, field: 1 });
  const resolution = await resolvePatient(pid, context.principal.partnerId, services);
  const keys = await services.keys();
  const priorIdentifierKey = chartIdentifierKey(keys, present(valueAt(mrg, 1, 4)) ?? '', priorMrn);
  const reviewId = `merge-${keys.patientIdentifierKey(valueAt(message.segments[0], 4), valueAt(message.segments[0], 10)).slice(0, 24)}`;
  // never applied, whoever sends it: a person reviews every merge (and the answer is AA whether or not the patients are known)
  await services.merges.hold({
    reviewId,
    survivingPatientId: resolution.patientId,
    priorIdentifierKey,
    partnerId: context.principal.partnerId,
    receivedAt: context.now,
  });
  return { audit: { action: 'hl7.adt.merge_held', ...(resolution.patientId ? { patientId: resolution.patientId } : {}), resourceIds: { reviewId } } };
}

// ---- MDM^T02 / T08 / T10 ----

/** Table 0271 document completion status. */
const COMPLETION_STATUSES = new Set(['DI', 'DO', 'IP', 'IN', 'PA', 'AU', 'LA']);
const DOCUMENT_NUMBER = /^[A-Za-z0-9._-]{1,64}$/;

function locateNote(path: string): ErrorLocation {
  if (path.startsWith('text')) return { segmentId: 'OBX', segmentSequence: 1, field: 5 };
  if (path.startsWith('author')) return { segmentId: 'TXA', segmentSequence: 1, field: 9 };
  if (path.startsWith('createdAt')) return { segmentId: 'TXA', segmentSequence: 1, field: 6 };
  if (path.startsWith('authenticated')) return { segmentId: 'TXA', segmentSequence: 1, field: 22 };
  return { segmentId: 'TXA', segmentSequence: 1, field: 12 };
}

/** The note an MDM carries (without the patient), checked against the record rules. */
function noteFrom(message: ParsedMessage, context: HandlerContext): Omit<Note, 'patientId'> {
  const txa = firstSegment(message, 'TXA');
  if (!txa) reject('AE', ErrorCodes.segmentSequence, 'MDM requires a TXA segment', { segmentId: 'TXA' });
  const at = (field: number): ErrorLocation => ({ segmentId: 'TXA', segmentSequence: 1, field });
  const documentNumber = present(valueAt(txa, 12, 1));
  if (!documentNumber) reject('AE', ErrorCodes.requiredFieldMissing, 'TXA-12 unique document number is required', at(12));
  if (!DOCUMENT_NUMBER.test(documentNumber)) reject('AE', ErrorCodes.dataType, 'TXA-12 must be 1-64 letters, digits or . _ -', at(12));
  const author = clinician(txa.fields[9]?.[0]) ?? clinician(txa.fields[5]?.[0]);
  if (!author) reject('AE', ErrorCodes.requiredFieldMissing, 'TXA-9 (or TXA-5) author name is required', at(9));
  // a time stamp without an offset is a wall-clock time in the sending partner's zone, as in ORU and ADT (issue 27 item 4)
  const zone = isTimeZone(context.principal.timeZone ?? '') ? context.principal.timeZone! : DEFAULT_TIME_ZONE;
  // kept in the sender's offset (the chart exports a note's times as stored)
  const createdAt = dateTimeFromTs(
    present(valueAt(txa, 6)) ?? present(valueAt(txa, 4)) ?? present(valueAt(firstSegment(message, 'EVN'), 2)) ?? valueAt(message.segments[0], 7),
    zone,
  );
  if (!createdAt) reject('AE', ErrorCodes.dataType, 'TXA-6 origination date-time must be a valid HL7 date-time', at(6));
  const completionStatus = present(valueAt(txa, 17));
  if (completionStatus !== undefined && !COMPLETION_STATUSES.has(completionStatus))
    reject('AE', ErrorCodes.tableValueNotFound, 'TXA-17 document completion status must be a table 0271 value', at(17));
  // TXA-22 (PPN): who authenticated and when (component 15); required with AU / LA, taken as sent, never made up
  const authenticator = txa.fields[22]?.[0];
  const authenticatedBy: Clinician | undefined = clinician(authenticator);
  const authenticatedAt = authenticator ? dateTimeFromTs(authenticator[14]?.[0] ?? '', zone) : undefined;
  if ((completionStatus === 'AU' || completionStatus === 'LA') && !authenticatedBy)
    reject('AE', ErrorCodes.requiredFieldMissing, 'TXA-22 authentication person is required when TXA-17 is AU or LA', at(22));
  const text = message.segments
    .filter((segment) => segment.name === 'OBX')
    .map(obxText)
    .join('\n');
  if (text.trim() === '') reject('AE', ErrorCodes.requiredFieldMissing, 'the note text (OBX-5) is empty', { segmentId: 'OBX', segmentSequence: 1, field: 5 });
  const note = compact({
    noteId: `${context.principal.partnerId}:${documentNumber}`,
    documentNumber,
    author,
    createdAt,
    text,
    completionStatus,
    authenticatedBy: completionStatus === 'AU' || completionStatus === 'LA' ? authenticatedBy : undefined,
    authenticatedAt: completionStatus === 'AU' || completionStatus === 'LA' ? authenticatedAt : undefined,
    provenance: provenanceOf(message, context),
    version: 1,
  });
  refuseProblems(checkNoteValues({ ...note, patientId: 'partner-note' }, context.now), locateNote);
  return note;
}

async function handleMdm(message: ParsedMessage, event: string, services: HandlerDependencies, context: HandlerContext): Promise<HandledMessage> {
  const pid = firstSegment(message, 'PID');
  const partnerId = context.principal.partnerId;
  const named = await resolvePatient(pid, partnerId, services);
  const draft = noteFrom(message, context);
  const documentNumber = draft.documentNumber!;
  const fingerprint = (await services.keys()).bodyFingerprint(documentContent(draft));
  // the document number's answer comes first and from the sender's own earlier messages only: the same
  // whether the message names a chart patient, a patient the partner is not related to, or nobody
  if (event === 'T02' && (await services.documentNumbers.claim(partnerId, documentNumber, fingerprint, context.now)) === 'different') reuseRefused();
  const resolution = await requireRelationship(named, partnerId, services.relationships, context.now);
  const hold = async (reason: HeldRecord['reason']): Promise<HandledMessage> => {
    const id = await heldId(services, context, ['document', draft.noteId, valueAt(message.segments[0], 10)]);
    await services.held.hold({ heldId: id, provenance: draft.provenance!, person: resolution.person, body: { kind: 'document', note: draft }, reason });
    return { audit: { action: 'hl7.mdm.document_held', resourceIds: { heldId: id, event } } };
  };
  // a replacement carries the number's content from now on, filed or held alike
  if (event !== 'T02') await services.documentNumbers.replace(partnerId, documentNumber, fingerprint, context.now);
  if (!resolution.patientId) return hold(resolution.reason ?? 'patient-unresolved');
  const note: Note = { ...draft, patientId: resolution.patientId };
  if (event === 'T02') {
    if (!(await services.chart.putNoteIfAbsent(note))) {
      const stored = await services.chart.getNote(note.patientId, note.noteId);
      // only a number used before the register existed can get here with other content: held, never a
      // 205 that only a chart patient's document could cause
      if (!stored || !sameDocument(stored, note)) return hold('document-number-reused');
    }
  } else if (!(await services.chart.replacePartnerNote(note, partnerId))) {
    // no document of this sender to replace under this patient: held for a reviewer, answered as any held document
    // (an AE here would tell the sender the patient is known)
    return hold('no-document-to-replace');
  }
  return {
    audit: { action: event === 'T02' ? 'hl7.mdm.note_store' : 'hl7.mdm.note_replace', patientId: note.patientId, resourceIds: { noteId: note.noteId } },
  };
}

/** AE 205: the sender used this TXA-12 before for another document (whatever patient either names). */
function reuseRefused(): never {
  return reject(
    'AE',
    ErrorCodes.duplicateKeyIdentifier,
    'TXA-12 document number was already used by this sender for another document: send MDM^T10 to replace it',
    {
      segmentId: 'TXA',
      segmentSequence: 1,
      field: 12,
    },
  );
}

export { checkSender };

/**
 * The pure mappings from a parsed message to the records intake stores (no I/O), for the property test
 * that feeds generated intake messages through every export (test/hl7/export-totality.test.ts).
 */
export const intakeMappings = { observationGroups, labBody, patientFrom, noteFrom } as const;
