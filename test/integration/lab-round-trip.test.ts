/**
 * Issue 27, first "Done when": lab results from other senders keep, field by field, what the sender sent
 * in the fields of the lab model (item 1) through every export.
 *
 * In: the public samples' ORU^R01 messages (test/hl7/samples, origins and licences in its README) and
 * generated ORU^R01 messages covering every value type, abnormal flag, observation and order status,
 * comment placement and time precision, posted to POST /receiveHl7; generated JSON bodies with every
 * optional field posted to POST /receiveTestData.
 * Out: GET /exportHl7LabResult, GET /exportHl7PatientSummary in both profiles (batch: demo-export-key,
 * ORU: demo-export-oru-key), GET /fhir/DiagnosticReport?patient= (Observations contained).
 *
 * What was rewritten in the samples (nothing else): PID (the chart patient DEMO-000001^^^DEMO-HOSP^MR,
 * Sample^Alex, 19800412, so the results are filed to a chart patient and the summary and FHIR show
 * them), MSH-4 (DEMO-LAB-LIS, or demo-lab when an earlier sample already used the same accession number
 * under DEMO-LAB-LIS: both are senders of the demo-lab partner, and a result is one (sender, accession)),
 * MSH-10 (made unique: two samples share MSH-10 `20230607002849_0365`, which would be AR 205 from one sender).
 * MSH-11 `D` of the samples is accepted by configuring this stage (as receive-hl7-samples.test.ts does).
 *
 * Every representation change an export is allowed to make is a named rule below (RULES), counted when
 * applied, never a silent skip. Values that are dropped or changed otherwise are failures; the real
 * ones found are listed in KNOWN_ISSUES (printed, and asserted to still be what they are).
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Env } from '../../lib/config/service';
import { isPlainIdentifier, shortIdentifier, IDENTIFIER_LENGTH } from '../../lib/hl7/identifiers';
import { parseHl7Message, repetitionsOf, valueAt, type ParsedMessage, type ParsedSegment } from '../../lib/hl7/parser';
import type { LocalStack } from '../../lib/local/stack';
import { SAMPLES, SAMPLE_FILES } from '../hl7/lab-oru-samples';
import { call, startTestStack } from '../support/local-stack';
import { usCoreLabViolations } from '../fhir-profiles/profile-checker';

jest.setTimeout(180_000);

const PATIENT = 'demo-patient-1';
const CHART_PID = 'PID|1||DEMO-000001^^^DEMO-HOSP^MR||Sample^Alex||19800412|F';

// ---------------------------------------------------------------------------------------------------
// The model of what a sender sent, in the fields of issue 27 item 1 (from an ORU group or a JSON body)

/** A time as the sender wrote it: its precision and, for times of day, the instant. */
interface SentTime {
  raw: string;
  /** Y, M, D (no zone), H (an hour without minutes), Min, S (with the fraction digits) */
  precision: 'Y' | 'M' | 'D' | 'H' | 'Min' | 'S';
  /** the calendar text for Y/M/D, the UTC instant in ms plus fraction text for H/Min/S */
  key: string;
  /** not a calendar time (e.g. 20170229): intake leaves it out (docs/hl7-intake.md) */
  invalid?: boolean;
  /** the offset written with the time, minutes east of UTC (`Z` and `+0000` are 0); absent when none was written */
  offset?: number;
}

interface SentCoding {
  code: string;
  display?: string;
  system?: string;
}

interface SentObservation {
  where: string;
  code?: string;
  /** OBX-3.2, else OBX-3.1 (the test name) */
  name: string;
  /** OBX-3.2 as sent (JSON: testName, unless testNameFrom is `code`); absent when the lab sent none */
  display?: string;
  system?: string;
  alternate?: SentCoding;
  type: string;
  /** NM/SN/CE/TX(lines)/text: canonical value text */
  value:
    | { kind: 'NM'; text: string }
    | { kind: 'SN'; parts: [string, string, string, string] }
    | { kind: 'CE'; coding: SentCoding }
    | { kind: 'lines'; lines: string[] }
    | { kind: 'text'; text: string };
  unitsCode?: string;
  units?: string;
  range?: string;
  flags: string[];
  status?: string;
  observedAt?: SentTime;
  /** JSON observedEndAt (FHIR effectivePeriod.end; OBX-14 has none) */
  observedEndAt?: SentTime;
  /** JSON reportedAt (FHIR Observation.issued; no OBX field) */
  reportedAt?: SentTime;
  /** JSON referenceRangeUnits / referenceRangeUnitsCode (FHIR referenceRange low / high; OBX-7 is a text) */
  rangeUnits?: string;
  rangeUnitsCode?: string;
  performer?: string;
  comments: string[];
}

interface SentResult {
  label: string;
  sender: string;
  accession: string;
  accessionNamespace?: string;
  placer?: { id: string; namespace?: string };
  service?: SentCoding;
  collectedAt?: SentTime;
  /** OBR-8 as sent (JSON: order.collectedEndAt) */
  collectedEndAt?: SentTime;
  /** OBR-22 as sent (JSON: order.reportedAt, else ResultedDateUTC) */
  reportedAt?: SentTime;
  provider?: { id?: string; family: string; given?: string; middle?: string; suffix?: string; prefix?: string };
  orderStatus?: string;
  /** the result status word (final, preliminary, corrected, cancelled) */
  status: string;
  specimen?: { type?: SentCoding; collectedAt?: SentTime; id?: { id: string; namespace?: string } };
  /** JSON order.performer (FHIR DiagnosticReport.performer; the first name is OBX-23 of a test without its own) */
  performers?: Array<{ name?: string; identifier?: { id: string; namespace?: string } }>;
  comments: string[];
  observations: SentObservation[];
}

const present = (value: string | undefined): string | undefined => (value === undefined || value.trim() === '' || value === '""' ? undefined : value);

function tsTime(raw: string | undefined): SentTime | undefined {
  const value = present(raw)?.trim();
  if (!value) return undefined;
  const m = /^(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:\.(\d+))?([+-]\d{4})?$/.exec(value);
  if (!m) return { raw: value, precision: 'S', key: `unparsed ${value}` };
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  if (!mo) return { raw: value, precision: 'Y', key: y! };
  if (!d) return { raw: value, precision: 'M', key: `${y}-${mo}` };
  const calendar = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)));
  if (calendar.getUTCMonth() !== Number(mo) - 1 || calendar.getUTCDate() !== Number(d)) return { raw: value, precision: 'D', key: 'invalid', invalid: true };
  if (!h) return { raw: value, precision: 'D', key: `${y}-${mo}-${d}` };
  // a time without an offset is in the sending partner's zone: demo-lab has none set, the default is UTC (docs/hl7-intake.md)
  const offset = zone ? (zone[0] === '-' ? -1 : 1) * (Number(zone.slice(1, 3)) * 60 + Number(zone.slice(3, 5))) : 0;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi ?? '0'), Number(s ?? '0')) - offset * 60_000;
  return { raw: value, precision: s ? 'S' : mi ? 'Min' : 'H', key: `${ms}${frac ? `.${frac}` : ''}`, ...(zone ? { offset } : {}) };
}

function isoTime(raw: string | undefined): SentTime | undefined {
  const value = present(raw)?.trim();
  if (!value) return undefined;
  const m = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:T(\d{2})(?::(\d{2})(?::(\d{2})(?:\.(\d+))?)?)?(Z|[+-]\d{2}:\d{2}))?)?)?$/.exec(value);
  if (!m) return { raw: value, precision: 'S', key: `unparsed ${value}` };
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  if (!mo) return { raw: value, precision: 'Y', key: y! };
  if (!d) return { raw: value, precision: 'M', key: `${y}-${mo}` };
  if (!h) return { raw: value, precision: 'D', key: `${y}-${mo}-${d}` };
  const offset = zone === 'Z' ? 0 : (zone![0] === '-' ? -1 : 1) * (Number(zone!.slice(1, 3)) * 60 + Number(zone!.slice(4, 6)));
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi ?? '0'), Number(s ?? '0')) - offset * 60_000;
  return { raw: value, precision: s ? 'S' : mi ? 'Min' : 'H', key: `${ms}${frac ? `.${frac}` : ''}`, offset };
}

const texts = (field: string[][][]) => field.map((rep) => rep.map((c) => c.join('')).join(''));

function hl7Observation(obx: ParsedSegment, comments: string[], where: string): SentObservation {
  const type = valueAt(obx, 2).trim().toUpperCase();
  const reps = repetitionsOf(obx, 5);
  const first = reps[0] ?? [];
  const c = (i: number) => (first[i]?.[0] ?? '').trim();
  let value: SentObservation['value'];
  if (type === 'NM') value = { kind: 'NM', text: c(0) };
  else if (type === 'SN') value = { kind: 'SN', parts: [c(0), c(1), c(2), c(3)] };
  else if (type === 'CE' || type === 'CWE' || type === 'CNE')
    value = { kind: 'CE', coding: { code: c(0), display: present(first[1]?.[0]), system: present(c(2)) } };
  // every repetition (an empty one is an empty line; repetitionsOf leaves empty ones out)
  else if (type === 'TX' || type === 'FT')
    value = {
      kind: 'lines',
      lines: texts(obx.fields[5] ?? [])
        .join('\n')
        .split('\n'),
    };
  else if (['ST', 'DT', 'TM', 'TS', 'DTM', 'ID', 'IS'].includes(type)) value = { kind: 'text', text: reps.map((rep) => rep[0]?.[0] ?? '').join(', ') };
  else value = { kind: 'text', text: reps.map((rep) => rep.map((comp) => comp.join('&')).join('^')).join('~') };
  const ucum = valueAt(obx, 6, 3).trim().toUpperCase() === 'UCUM' && present(valueAt(obx, 6, 1)) !== undefined;
  const unitsId = present(valueAt(obx, 6, 1));
  const unitsText = present(valueAt(obx, 6, 2));
  const alt = present(valueAt(obx, 3, 4));
  return {
    where,
    code: present(valueAt(obx, 3, 1))?.trim(),
    name: present(valueAt(obx, 3, 2)) ?? present(valueAt(obx, 3, 1)) ?? '',
    display: present(valueAt(obx, 3, 2)),
    system: present(valueAt(obx, 3, 3))?.trim(),
    alternate: alt ? { code: alt.trim(), display: present(valueAt(obx, 3, 5)), system: present(valueAt(obx, 3, 6))?.trim() } : undefined,
    type,
    value,
    unitsCode: ucum ? unitsId : undefined,
    units: ucum ? (unitsText ?? unitsId) : (unitsId ?? unitsText),
    range: present(valueAt(obx, 7)),
    flags: repetitionsOf(obx, 8)
      .map((rep) => (rep[0]?.[0] ?? '').trim())
      .filter(Boolean),
    status: present(valueAt(obx, 11))?.trim(),
    observedAt: tsTime(valueAt(obx, 14)),
    performer: present(valueAt(obx, 23, 1)),
    comments,
  };
}

interface Hl7Group {
  obr: ParsedSegment;
  orc?: ParsedSegment;
  notes: string[];
  obx: Array<{ obx: ParsedSegment; notes: string[] }>;
  spm?: ParsedSegment;
}

const nteText = (nte: ParsedSegment) => texts(repetitionsOf(nte, 3)).join('\n');

/** The OBR groups of an ORU (ORC before its OBR, NTE after the OBR or after an OBX, SPM). */
function hl7Groups(message: ParsedMessage): Hl7Group[] {
  const groups: Hl7Group[] = [];
  let orc: ParsedSegment | undefined;
  let current: Hl7Group | undefined;
  for (const segment of message.segments) {
    if (segment.name === 'ORC') {
      orc = segment;
      current = undefined;
    } else if (segment.name === 'OBR') {
      current = { obr: segment, orc, notes: [], obx: [] };
      orc = undefined;
      groups.push(current);
    } else if (segment.name === 'OBX' && current) current.obx.push({ obx: segment, notes: [] });
    else if (segment.name === 'NTE' && current) {
      const text = nteText(segment);
      if (text.trim() === '') continue; // a blank NTE holds no comment (intake leaves it out)
      (current.obx.length ? current.obx[current.obx.length - 1]!.notes : current.notes).push(text);
    } else if (segment.name === 'SPM' && current) current.spm ??= segment;
    else if (segment.name === 'PID' || segment.name === 'MSH') current = undefined;
  }
  return groups;
}

const STATUS_0123: Record<string, string> = {
  F: 'final',
  C: 'corrected',
  X: 'cancelled',
  P: 'preliminary',
  A: 'preliminary',
  R: 'preliminary',
  O: 'preliminary',
  I: 'preliminary',
  S: 'preliminary',
};

function ei(components: string[][] | undefined): { id: string; namespace?: string } | undefined {
  const id = present(components?.[0]?.[0]);
  if (!id) return undefined;
  const namespace = present(components?.[1]?.[0]) ?? present(components?.[2]?.[0]);
  return namespace ? { id, namespace } : { id };
}

function coding(components: string[][] | undefined, first = 0): SentCoding | undefined {
  const code = present(components?.[first]?.[0])?.trim();
  if (!code) return undefined;
  return { code, display: present(components?.[first + 1]?.[0]), system: present(components?.[first + 2]?.[0])?.trim() };
}

/** What the sender sent in one OBR group. */
function sentFromGroup(label: string, sender: string, group: Hl7Group): SentResult {
  const { obr, orc, spm } = group;
  const filler = present(valueAt(obr, 3));
  const accessionField = filler ? 3 : 2;
  const xcn = obr.fields[16]?.[0];
  const family = present(xcn?.[1]?.[0]);
  const spmId = spm?.fields[2]?.[0];
  const specimenId = spmId ? (ei(spmId[1]?.map((s) => [s])) ?? ei(spmId[0]?.map((s) => [s]))) : undefined;
  const obr15 = obr.fields[15]?.[0]?.[0];
  const specimenType = coding(spm?.fields[4]?.[0]) ?? (obr15 ? coding(obr15.map((s) => [s])) : undefined);
  const specimen = specimenType || spm ? { type: specimenType, collectedAt: tsTime(valueAt(spm, 17)), id: specimenId } : undefined;
  const statusText = present(valueAt(obr, 25)) ?? present(valueAt(group.obx[0]?.obx, 11)) ?? '';
  return {
    label,
    sender,
    accession: (filler ?? valueAt(obr, 2)).trim(),
    accessionNamespace: present(valueAt(obr, accessionField, 2)) ?? present(valueAt(obr, accessionField, 3)),
    placer: ei(obr.fields[2]?.[0]) ?? ei(orc?.fields[2]?.[0]),
    service: coding(obr.fields[4]?.[0]) ?? coding(obr.fields[4]?.[0], 3),
    collectedAt: tsTime(valueAt(obr, 7)),
    collectedEndAt: tsTime(valueAt(obr, 8)),
    reportedAt: tsTime(valueAt(obr, 22)),
    provider: family
      ? {
          id: present(xcn?.[0]?.[0]),
          family,
          given: present(xcn?.[2]?.[0]),
          middle: present(xcn?.[3]?.[0]),
          suffix: present(xcn?.[4]?.[0]),
          prefix: present(xcn?.[5]?.[0]),
        }
      : undefined,
    orderStatus: present(valueAt(obr, 25)),
    status: STATUS_0123[statusText.toUpperCase()] ?? statusText,
    specimen,
    comments: group.notes,
    observations: group.obx.map(({ obx, notes }, i) => hl7Observation(obx, notes, `${label} OBX[${i + 1}]`)),
  };
}

// ---------------------------------------------------------------------------------------------------
// Comparison

interface Tally {
  fields: number;
  failures: string[];
  rules: Map<string, number>;
}
const tally: Tally = { fields: 0, failures: [], rules: new Map() };
const messages = { hl7: 0, hl7Groups: 0, json: 0 };

/** A representation an export may legitimately change, applied by name (counted, printed). */
function rule(name: string): void {
  tally.rules.set(name, (tally.rules.get(name) ?? 0) + 1);
}

function check(failures: string[], where: string, field: string, sent: string | undefined, got: string | undefined): void {
  tally.fields += 1;
  // the summary (HL7 summary, FHIR) holds every value whole (issue 27 K2: no cut at 1,024 characters any more)
  const a = sent ?? '';
  const b = got ?? '';
  if (a !== b) failures.push(`${where} ${field}: sent ${JSON.stringify(a)}, got ${JSON.stringify(b)}`);
}

function checkTime(failures: string[], where: string, field: string, sent: SentTime | undefined, got: SentTime | undefined, fhir = false): void {
  if (!sent) return;
  if (sent.invalid) {
    rule('a time that is no calendar time (20170229) is not kept (docs/hl7-intake.md): the export writes its default time');
    return;
  }
  tally.fields += 1;
  let gotKey = got ? `${got.precision}:${got.key}` : '';
  if (fhir && sent.precision === 'Min' && got?.precision === 'S' && !got.key.includes('.') && Number(got.key) % 60_000 === 0) {
    rule('FHIR dateTime: a time with minutes gets :00 seconds (R4 requires seconds once there are minutes)');
    gotKey = `Min:${got.key}`;
  }
  if (fhir && sent.precision === 'H' && got?.precision === 'S' && got.key === sent.key) {
    rule('FHIR dateTime: an hour without minutes gets :00:00 (FHIR has no hour precision; HL7 exports keep the hour)');
    gotKey = `H:${got.key}`;
  }
  // the offset the sender wrote is kept (the same instant in UTC is not what was sent)
  const sentKey = `${sent.precision}:${sent.key}${sent.offset !== undefined ? ` ${sent.offset}` : ''}`;
  if (sent.offset !== undefined) gotKey += got?.offset !== undefined ? ` ${got.offset}` : '';
  if (sentKey !== gotKey) failures.push(`${where} ${field}: sent ${JSON.stringify(sent.raw)}, got ${JSON.stringify(got?.raw ?? '')}`);
}

const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)$/;
/** Systems the lab schema keeps (table 0396 names): a code's system with other characters is left out at intake. */
const SYSTEM_NAME = /^[A-Za-z0-9][A-Za-z0-9.-]*$/;

function expectedSystem(o: SentObservation): string | undefined {
  if (!o.code) return undefined;
  if (o.system !== undefined && !(o.system.length <= 20 && SYSTEM_NAME.test(o.system))) {
    rule('OBX-3.3 that is no table 0396 name (spaces, colons: e.g. a LOINC long name) is not a coding system: written as L');
    return 'L';
  }
  if (o.system === undefined) {
    rule('OBX-3 code without a coding system: written with L (local)');
    return 'L';
  }
  return o.system;
}

/** OBX-5.5 of an ED value (the document data), when there is one. */
const edData = (o: SentObservation): string | undefined => (o.type === 'ED' && o.value.kind === 'text' ? present(o.value.text.split('^')[4]) : undefined);

/** The text a value reads as (the summary `result`): the comparison key of text-only value types. */
function valueText(o: SentObservation): string {
  if (o.type === 'ED' && o.value.kind === 'text' && !o.value.text.split('^')[4]) {
    rule('OBX-2 ED without data (OBX-5.5 empty): no document, so no value');
    return '';
  }
  switch (o.value.kind) {
    case 'NM':
    case 'text':
      return o.value.text;
    case 'SN':
      return o.value.parts.join('');
    case 'CE':
      return o.value.coding.display ?? o.value.coding.code;
    case 'lines':
      return o.value.lines.join('\n');
  }
}

/** One exported OBX (with its NTE) against what was sent. */
function compareHl7Observation(
  failures: string[],
  where: string,
  sent: SentObservation,
  obx: ParsedSegment | undefined,
  notes: string[],
  reportPerformer?: string,
): void {
  if (!obx) {
    tally.fields += 1;
    failures.push(`${where}: sent an OBX (${sent.name}), the export has none`);
    return;
  }
  const got = hl7Observation(obx, notes, where);
  check(failures, where, 'OBX-3.1', sent.code, got.code);
  // a code sent without a display comes back without one (no `code^code^LN`); without a code, OBX-3.2 is the name
  check(failures, where, 'OBX-3.2', sent.code ? sent.display : sent.name, sent.code ? got.display : got.name);
  check(failures, where, 'OBX-3.3', expectedSystem(sent), got.system);
  if (sent.alternate) {
    check(failures, where, 'OBX-3.4', sent.alternate.code, got.alternate?.code);
    check(failures, where, 'OBX-3.5', sent.alternate.display, got.alternate?.display);
    check(failures, where, 'OBX-3.6', sent.alternate.system, got.alternate?.system);
  }
  const cancelled = sent.status?.toUpperCase() === 'X';
  if (edData(sent)) {
    rule('OBX-2 ED with data is an attached document: its observation row carries no value, the document is an OBX ED of its own after the observations');
    check(failures, where, 'OBX-5 (ED row)', '', valueText(got));
  } else if (cancelled) {
    rule('OBX-11 X (result cannot be obtained): the export writes no value (v2.5.1: X carries none)');
    check(failures, where, 'OBX-5 (X: no value)', '', valueText(got));
  } else if (sent.value.kind === 'NM' && DECIMAL.test(sent.value.text)) {
    check(failures, where, 'OBX-2', 'NM', got.type);
    check(failures, where, 'OBX-5', sent.value.text, got.value.kind === 'NM' ? got.value.text : valueText(got));
  } else if (sent.value.kind === 'SN' && sent.type === 'SN') {
    check(failures, where, 'OBX-2', 'SN', got.type);
    check(failures, where, 'OBX-5', sent.value.parts.join('^'), got.value.kind === 'SN' ? got.value.parts.join('^') : valueText(got));
  } else if (sent.value.kind === 'CE' && sent.value.coding.code) {
    if (sent.type === 'CWE' || sent.type === 'CNE') rule('OBX-2 CWE/CNE written as CE (v2.5.1 table 0125 as the exports use it)');
    check(failures, where, 'OBX-2', 'CE', got.type);
    const g = got.value.kind === 'CE' ? got.value.coding : undefined;
    check(failures, where, 'OBX-5.1', sent.value.coding.code, g?.code);
    check(failures, where, 'OBX-5.2', sent.value.coding.display, g?.display);
    check(failures, where, 'OBX-5.3', sent.value.coding.system, g?.system);
  } else if (sent.value.kind === 'lines' && sent.value.lines.some((l) => l !== '')) {
    check(failures, where, 'OBX-2', sent.type, got.type);
    check(failures, where, 'OBX-5', sent.value.lines.join('\n'), valueText(got));
  } else {
    // text-only value types (ST, DT, TM, ID, CX, XAD...; an NM/SN/CE that is not what its type says):
    // the model keeps the text, the export writes it as NM/SN/ST/TX by its shape (README "Lab tests")
    rule('text-only value type: OBX-5 compared as text, OBX-2 chosen by the text (NM/SN/ST/TX)');
    const text = valueText(sent);
    if (sent.type === 'ST' && (text.includes('\n') || text.length > 199)) {
      // ST holds one line of at most 199 characters (v2.5.1): a longer or multi-line text goes out as TX
      rule('an ST value with line breaks or over 199 characters is written as TX');
      check(failures, where, 'OBX-2', 'TX', got.type);
    } else if (sent.type === 'ST' && !DECIMAL.test(text) && !/^\s*(<=|>=|<|>|=)|^\s*\d+\s*[:/]\s*\d+\s*$/.test(text))
      check(failures, where, 'OBX-2', 'ST', got.type);
    check(failures, where, 'OBX-5', valueText(sent), valueText(got));
  }
  check(failures, where, 'OBX-6.1', sent.unitsCode ?? sent.units, got.unitsCode ?? got.units);
  if (sent.unitsCode) {
    check(failures, where, 'OBX-6.2', sent.units, got.units);
    check(failures, where, 'OBX-6.3', 'UCUM', valueAt(obx, 6, 3));
  }
  // OBX-7 is a text in OBX-6's units: a range sent in other units (JSON referenceRangeUnits / Code) is left out
  const rangeUnits = sent.rangeUnits ?? sent.rangeUnitsCode;
  const rangeApart =
    rangeUnits !== undefined &&
    (sent.rangeUnitsCode !== undefined && sent.unitsCode !== undefined
      ? sent.rangeUnitsCode !== sent.unitsCode
      : rangeUnits !== (sent.units ?? sent.unitsCode));
  check(failures, where, 'OBX-7', rangeApart ? undefined : sent.range, got.range);
  check(failures, where, 'OBX-8', sent.flags.join('~'), got.flags.join('~'));
  if (sent.status) check(failures, where, 'OBX-11', sent.status, got.status);
  checkTime(failures, where, 'OBX-14', sent.observedAt, got.observedAt);
  if (sent.performer ?? reportPerformer) check(failures, where, 'OBX-23.1', sent.performer ?? reportPerformer, got.performer);
  check(failures, where, 'NTE after OBX', sent.comments.join(' | '), got.comments.join(' | '));
}

function expectedEi(id: string): string {
  if (!isPlainIdentifier(id, IDENTIFIER_LENGTH.ei))
    rule('an EI-1 that is too long or holds a delimiter / space / _ is written in its stable short form (README wire rules)');
  return shortIdentifier(id, IDENTIFIER_LENGTH.ei);
}

function expectedXcn(id: string): string {
  if (!isPlainIdentifier(id, IDENTIFIER_LENGTH.xcn)) rule('an XCN-1 that is too long or holds a delimiter / space / _ is written in its stable short form');
  return shortIdentifier(id, IDENTIFIER_LENGTH.xcn);
}

/** One exported OBR group against what was sent. */
function compareHl7Group(failures: string[], where: string, sent: SentResult, group: Hl7Group | undefined): void {
  if (!group) {
    tally.fields += 1;
    failures.push(`${where}: no OBR group for accession ${sent.accession}`);
    return;
  }
  const { obr, spm } = group;
  check(failures, where, 'OBR-3.1', expectedEi(sent.accession), valueAt(obr, 3, 1));
  if (sent.accessionNamespace) check(failures, where, 'OBR-3.2', sent.accessionNamespace, valueAt(obr, 3, 2));
  if (sent.placer) {
    check(failures, where, 'OBR-2.1', expectedEi(sent.placer.id), valueAt(obr, 2, 1));
    if (sent.placer.namespace) check(failures, where, 'OBR-2.2', sent.placer.namespace, valueAt(obr, 2, 2));
  }
  if (sent.service) {
    check(failures, where, 'OBR-4.1', sent.service.code, valueAt(obr, 4, 1));
    check(failures, where, 'OBR-4.2', sent.service.display, present(valueAt(obr, 4, 2)));
    check(failures, where, 'OBR-4.3', sent.service.system, present(valueAt(obr, 4, 3)));
  }
  checkTime(failures, where, 'OBR-7', sent.collectedAt, tsTime(valueAt(obr, 7)));
  // an OBR-8 ends the period OBR-7 starts: without OBR-7 intake leaves it out (the generated ends all follow their starts)
  checkTime(failures, where, 'OBR-8', sent.collectedAt ? sent.collectedEndAt : undefined, tsTime(valueAt(obr, 8)));
  checkTime(failures, where, 'OBR-22', sent.reportedAt, tsTime(valueAt(obr, 22)));
  if (sent.provider) {
    if (sent.provider.id) {
      if (!isPlainIdentifier(sent.provider.id, IDENTIFIER_LENGTH.xcn))
        rule('an XCN-1 that is too long or holds a delimiter / space / _ is written in its stable short form');
      check(failures, where, 'OBR-16.1', shortIdentifier(sent.provider.id, IDENTIFIER_LENGTH.xcn), valueAt(obr, 16, 1));
    }
    check(failures, where, 'OBR-16.2', sent.provider.family, valueAt(obr, 16, 2));
    check(failures, where, 'OBR-16.3', sent.provider.given, present(valueAt(obr, 16, 3)));
    check(failures, where, 'OBR-16.4', sent.provider.middle, present(valueAt(obr, 16, 4)));
    check(failures, where, 'OBR-16.5', sent.provider.suffix, present(valueAt(obr, 16, 5)));
    check(failures, where, 'OBR-16.6', sent.provider.prefix, present(valueAt(obr, 16, 6)));
  }
  if (sent.orderStatus) check(failures, where, 'OBR-25', sent.orderStatus, valueAt(obr, 25));
  check(failures, where, 'NTE after OBR', sent.comments.join(' | '), group.notes.join(' | '));
  if (sent.specimen?.type) {
    // SPM is written when the specimen type is known (README); OBR-15 of a v2.3/2.4 sender comes back as SPM-4
    const type = coding(spm?.fields[4]?.[0]);
    check(failures, where, 'SPM-4.1', sent.specimen.type.code, type?.code);
    check(failures, where, 'SPM-4.2', sent.specimen.type.display, type?.display);
    check(failures, where, 'SPM-4.3', sent.specimen.type.system, type?.system);
    checkTime(failures, where, 'SPM-17', sent.specimen.collectedAt, tsTime(valueAt(spm, 17)));
    if (sent.specimen.id) {
      const spmId = spm?.fields[2]?.[0];
      const got = spmId ? (ei(spmId[1]?.map((s) => [s])) ?? ei(spmId[0]?.map((s) => [s]))) : undefined;
      check(failures, where, 'SPM-2.id', sent.specimen.id.id, got?.id);
      check(failures, where, 'SPM-2.namespace', sent.specimen.id.namespace, got?.namespace);
    }
  }
  sent.observations.forEach((o, i) => {
    const exported = group.obx[i];
    compareHl7Observation(failures, `${where} OBX[${i + 1}]`, o, exported?.obx, exported?.notes ?? [], sent.performers?.find((p) => p.name)?.name);
  });
  const documents = sent.observations.filter((o) => edData(o) !== undefined);
  const extra = group.obx.slice(sent.observations.length);
  documents.forEach((o, k) => {
    const doc = extra[k]?.obx;
    if (doc && valueAt(doc, 2) === 'RP' && !where.endsWith('[single]')) {
      // issue 27 K6: the summary carries a document over 16 KiB by reference, RP-1 its single-result export (compared whole there)
      rule('summary: a document over 16 KiB is an OBX RP whose pointer is its single-result export (GET /exportHl7LabResult, where it is whole)');
      check(failures, where, `document OBX (${o.name}) RP-1`, `/exportHl7LabResult?resultId=${comparedResultId}`, valueAt(doc, 5, 1));
      check(failures, where, `document OBX (${o.name}) OBX-3.2`, o.name, valueAt(doc, 3, 2));
    } else check(failures, where, `document OBX (${o.name}) OBX-5.5`, edData(o), doc ? valueAt(doc, 5, 5) : undefined);
  });
  if (extra.length > documents.length) failures.push(`${where}: ${extra.length - documents.length} OBX more than sent`);
}

// --- FHIR

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

const SYSTEM_URI: Record<string, string> = {
  LN: 'http://loinc.org',
  SCT: 'http://snomed.info/sct',
  SNM: 'http://snomed.info/sct',
  UCUM: 'http://unitsofmeasure.org',
};
function systemUri(sender: string, name: string | undefined): string {
  const n = name ?? 'L';
  if (SYSTEM_URI[n]) return SYSTEM_URI[n]!;
  if (/^HL7\d{4}$/.test(n)) return `http://terminology.hl7.org/CodeSystem/v2-${n.slice(3)}`;
  return `urn:interop:sender:${encodeURIComponent(sender)}:code:${encodeURIComponent(n)}`;
}

const OBSERVATION_STATUS: Record<string, string> = {
  F: 'final',
  U: 'final',
  V: 'final',
  P: 'preliminary',
  R: 'preliminary',
  S: 'preliminary',
  C: 'corrected',
  A: 'amended',
  B: 'amended',
  W: 'entered-in-error',
  D: 'entered-in-error',
  X: 'cancelled',
  N: 'cancelled',
  I: 'registered',
  O: 'registered',
};

function compareCoding(
  failures: string[],
  where: string,
  field: string,
  sender: string,
  sent: SentCoding,
  got: Json | undefined,
  systemOf = (s: SentCoding) => systemUri(sender, s.system),
) {
  check(failures, where, `${field}.code`, sent.code, got?.code);
  check(failures, where, `${field}.system`, systemOf(sent), got?.system);
  check(failures, where, `${field}.display`, sent.display, got?.display);
}

function quantityText(q: Json | undefined): string {
  if (!q) return '';
  const precision = q._value?.extension?.[0]?.valueInteger;
  return precision !== undefined ? Number(q.value).toFixed(precision) : String(q.value);
}

function compareFhirObservation(
  failures: string[],
  where: string,
  sent: SentResult,
  o: SentObservation,
  obs: Json | undefined,
  defaults: { effective?: SentTime },
) {
  if (!obs) {
    tally.fields += 1;
    failures.push(`${where}: sent an observation (${o.name}), FHIR has none`);
    return;
  }
  const codings: Json[] = obs.code?.coding ?? [];
  if (o.code) {
    const system = expectedSystem(o);
    check(failures, where, 'code.coding[0].code', o.code, codings[0]?.code);
    check(failures, where, 'code.coding[0].system', systemUri(sent.sender, system), codings[0]?.system);
    check(failures, where, 'code.coding[0].display', o.display, codings[0]?.display);
  }
  // nothing named the test (a code without display): no text is made up from the code
  check(failures, where, 'code.text', o.code && o.display === undefined ? undefined : o.name, obs.code?.text);
  if (o.alternate) compareCoding(failures, where, 'code.coding[alt]', sent.sender, o.alternate, codings[o.code ? 1 : 0]);
  const status = o.status ? OBSERVATION_STATUS[o.status.toUpperCase()] : sent.status;
  check(failures, where, 'status', status, obs.status);
  const cancelled = status === 'cancelled';
  const unit = o.units ?? o.unitsCode;
  const checkUnits = (q: Json | undefined, label: string) => {
    check(failures, where, `${label}.unit`, unit, q?.unit);
    if (o.unitsCode) {
      check(failures, where, `${label}.code`, o.unitsCode, q?.code);
      check(failures, where, `${label}.system`, 'http://unitsofmeasure.org', q?.system);
    }
  };
  if (edData(o)) {
    // R4 Observation.value[x] has no Attachment: the document is the report's presentedForm (issue 27 K6), whole
    // (data) up to 16 KiB, else by url to its single-result export; the observation row has no value
    rule('FHIR: an ED document is in DiagnosticReport.presentedForm (R4 Observation has no Attachment value)');
    const form = comparedDocuments.shift();
    check(failures, where, 'document (ED) in FHIR presentedForm.title', o.name, form?.title);
    if (form?.url !== undefined) {
      rule('FHIR: a document over 16 KiB is presentedForm.url, its single-result export (where it is whole)');
      check(
        failures,
        where,
        'document (ED) in FHIR presentedForm.url',
        `/exportHl7LabResult?resultId=${comparedResultId}`,
        String(form.url).replace(/^https?:\/\/[^/]+/, ''),
      );
    } else check(failures, where, 'document (ED) in FHIR', edData(o), form?.data);
  } else if (cancelled) {
    rule('FHIR: a cancelled observation has no value, dataAbsentReason not-performed');
    check(failures, where, 'dataAbsentReason', 'not-performed', obs.dataAbsentReason?.coding?.[0]?.code);
  } else if (o.value.kind === 'NM' && DECIMAL.test(o.value.text)) {
    check(failures, where, 'valueQuantity.value', o.value.text.replace(/^\+/, ''), quantityText(obs.valueQuantity));
    checkUnits(obs.valueQuantity, 'valueQuantity');
  } else if (
    o.value.kind === 'SN' &&
    o.type === 'SN' &&
    o.value.parts.slice(1).every((p, i) => p === '' || (i === 1 ? ['-', ':', '/'].includes(p) : DECIMAL.test(p)))
  ) {
    const [comparator, v1, separator, v2] = o.value.parts;
    if (!separator) {
      if (comparator === '=') rule('SN comparator = : a Quantity without comparator (FHIR has no =)');
      check(failures, where, 'valueQuantity.value', v1, quantityText(obs.valueQuantity));
      check(failures, where, 'valueQuantity.comparator', comparator === '=' ? '' : comparator, obs.valueQuantity?.comparator);
      checkUnits(obs.valueQuantity, 'valueQuantity');
    } else if (separator === '-') {
      check(failures, where, 'valueRange.low', v1, quantityText(obs.valueRange?.low));
      check(failures, where, 'valueRange.high', v2, quantityText(obs.valueRange?.high));
      checkUnits(obs.valueRange?.low, 'valueRange.low');
    } else {
      check(failures, where, 'valueRatio.numerator', v1, quantityText(obs.valueRatio?.numerator));
      check(failures, where, 'valueRatio.denominator', v2, quantityText(obs.valueRatio?.denominator));
    }
  } else if (o.value.kind === 'CE' && o.value.coding.code) {
    compareCoding(failures, where, 'valueCodeableConcept.coding[0]', sent.sender, o.value.coding, obs.valueCodeableConcept?.coding?.[0]);
  } else if (o.value.kind === 'lines' && o.value.lines.some((l) => l !== '')) {
    check(failures, where, 'valueString', o.value.lines.join('\n'), obs.valueString);
  } else {
    rule('FHIR: a text-only value is valueString, or a Quantity / Ratio when the text is a number, comparator and number or ratio');
    const text = valueText(o);
    const got =
      obs.valueString ??
      (obs.valueQuantity ? `${obs.valueQuantity.comparator ?? ''}${quantityText(obs.valueQuantity)}` : undefined) ??
      (obs.valueRatio ? `${quantityText(obs.valueRatio.numerator)}:${quantityText(obs.valueRatio.denominator)}` : undefined);
    check(failures, where, 'value[x] (text)', text.trim() === '' ? undefined : text.replace(/\s+/g, (s) => s), got);
  }
  check(failures, where, 'interpretation', o.flags.join('~'), (obs.interpretation ?? []).map((i: Json) => i.coding?.[0]?.code).join('~'));
  check(failures, where, 'referenceRange.text', o.range, obs.referenceRange?.[0]?.text);
  if (o.rangeUnits || o.rangeUnitsCode) {
    // the bounds in their own units (not the value's)
    for (const bound of ['low', 'high'] as const) {
      check(failures, where, `referenceRange.${bound}.unit`, o.rangeUnits ?? o.rangeUnitsCode, obs.referenceRange?.[0]?.[bound]?.unit);
      check(failures, where, `referenceRange.${bound}.code`, o.rangeUnitsCode, obs.referenceRange?.[0]?.[bound]?.code);
    }
  }
  if (o.observedEndAt && o.observedAt) {
    // the test's own period (observedAt to observedEndAt)
    checkTime(failures, where, 'effectivePeriod.start', o.observedAt, isoTime(obs.effectivePeriod?.start), true);
    checkTime(failures, where, 'effectivePeriod.end', o.observedEndAt, isoTime(obs.effectivePeriod?.end), true);
  } else {
    // a time coarser than a day is a Period of that month or year (US Core us-core-1)
    const period = obs.effectivePeriod?.start === obs.effectivePeriod?.end ? obs.effectivePeriod?.start : undefined;
    checkTime(failures, where, 'effectiveDateTime', o.observedAt ?? defaults.effective, isoTime(obs.effectiveDateTime ?? period), true);
  }
  // the test's own issued (a time of day), else the report's
  if (o.reportedAt) checkTime(failures, where, 'issued', o.reportedAt, isoTime(obs.issued), true);
  check(failures, where, 'performer', o.performer ?? sent.performers?.find((p) => p.name)?.name ?? sent.sender, obs.performer?.[0]?.display);
  check(failures, where, 'note', o.comments.join(' | '), (obs.note ?? []).map((n: Json) => n.text).join(' | '));
}

/** The result being compared: its id (the document references name it) and its FHIR presentedForm, in order. */
let comparedResultId = '';
let comparedDocuments: Json[] = [];

/**
 * An accession or placer number in FHIR: the lab's value unchanged (first), and when OBR-3 / OBR-2 write a
 * short form, that form as a `secondary` identifier of the same system (one external id per entity, issue 27 item 5).
 */
function compareOrderNumber(failures: string[], where: string, type: 'ACSN' | 'PLAC', sent: string, system: string, identifiers: Json[]) {
  const ofType = identifiers.filter((i) => i.type?.coding?.[0]?.code === type);
  check(failures, where, `identifier[${type}].value`, sent, ofType[0]?.value);
  check(failures, where, `identifier[${type}].system`, system, ofType[0]?.system);
  const hl7 = expectedEi(sent);
  if (hl7 !== sent) {
    const secondary = ofType.find((i) => i.use === 'secondary');
    check(failures, where, `identifier[${type}, secondary].value (the HL7 form)`, hl7, secondary?.value);
    check(failures, where, `identifier[${type}, secondary].system`, system, secondary?.system);
  } else check(failures, where, `identifier[${type}] count`, '1', String(ofType.length));
}

function compareFhirReport(failures: string[], where: string, sent: SentResult, report: Json | undefined) {
  if (!report) {
    tally.fields += 1;
    failures.push(`${where}: no DiagnosticReport for accession ${sent.accession}`);
    return;
  }
  const contained: Json[] = report.contained ?? [];
  const byId = (ref: string | undefined) => contained.find((r) => `#${r.id}` === ref);
  const identifiers: Json[] = report.identifier ?? [];
  const ns = sent.accessionNamespace ? `:${encodeURIComponent(sent.accessionNamespace)}` : '';
  compareOrderNumber(failures, where, 'ACSN', sent.accession, `urn:interop:sender:${sent.sender}:accession${ns}`, identifiers);
  if (sent.placer) {
    const pns = sent.placer.namespace ? `:${encodeURIComponent(sent.placer.namespace)}` : '';
    compareOrderNumber(failures, where, 'PLAC', sent.placer.id, `urn:interop:sender:${sent.sender}:placer${pns}`, identifiers);
  }
  check(failures, where, 'status', sent.status, report.status);
  if (sent.service) compareCoding(failures, where, 'code.coding[0]', sent.sender, sent.service, report.code?.coding?.[0]);
  if (sent.collectedEndAt && sent.collectedAt) {
    // a collection with an end is the Period it stands for
    checkTime(failures, where, 'effectivePeriod.start', sent.collectedAt, isoTime(report.effectivePeriod?.start), true);
    checkTime(failures, where, 'effectivePeriod.end', sent.collectedEndAt, isoTime(report.effectivePeriod?.end), true);
  } else checkTime(failures, where, 'effectiveDateTime', sent.collectedAt ?? sent.specimen?.collectedAt, isoTime(report.effectiveDateTime), true);
  if (sent.reportedAt && !['S', 'Min', 'H'].includes(sent.reportedAt.precision))
    rule('FHIR issued is an instant: an OBR-22 without a time of day is issued as its instant (resulted at, UTC)');
  else checkTime(failures, where, 'issued', sent.reportedAt, isoTime(report.issued), true);
  if (sent.performers) {
    const expected = sent.performers.map((p) => ({
      ...(p.name ? { display: p.name } : {}),
      ...(p.identifier ? { identifier: { ...(p.identifier.namespace ? { system: p.identifier.namespace } : {}), value: p.identifier.id } } : {}),
    }));
    check(failures, where, 'performer (order.performer)', JSON.stringify(expected), JSON.stringify(report.performer));
  } else check(failures, where, 'performer (the sender)', JSON.stringify([{ display: sent.sender }]), JSON.stringify(report.performer));
  const order = byId(report.basedOn?.[0]?.reference);
  if (sent.provider) {
    const requester = order?.requester;
    if (sent.provider.id) check(failures, where, 'ServiceRequest.requester.identifier.value', expectedXcn(sent.provider.id), requester?.identifier?.value);
    check(
      failures,
      where,
      'ServiceRequest.requester.display (family)',
      'yes',
      String(requester?.display ?? '').includes(sent.provider.family) ? 'yes' : String(requester?.display),
    );
  }
  if (sent.orderStatus) {
    const s = sent.orderStatus.toUpperCase();
    const expected = s === 'F' || s === 'C' ? 'completed' : s === 'X' ? 'revoked' : 'active';
    check(failures, where, 'ServiceRequest.status (OBR-25)', expected, order?.status);
  }
  check(failures, where, 'ServiceRequest.note', sent.comments.join(' | '), (order?.note ?? []).map((n: Json) => n.text).join(' | '));
  const specimen = byId(report.specimen?.[0]?.reference);
  if (sent.specimen?.type) {
    compareCoding(failures, where, 'Specimen.type.coding[0]', sent.sender, sent.specimen.type, specimen?.type?.coding?.[0]);
    checkTime(
      failures,
      where,
      'Specimen.collection.collectedDateTime',
      sent.specimen.collectedAt ?? sent.collectedAt,
      isoTime(specimen?.collection?.collectedDateTime),
      true,
    );
    if (sent.specimen.id) check(failures, where, 'Specimen.identifier.value', sent.specimen.id.id, specimen?.identifier?.[0]?.value);
  }
  const observations = (report.result ?? []).map((r: Json) => byId(r.reference));
  comparedDocuments = [...(report.presentedForm ?? [])];
  const effective = sent.collectedAt ?? sent.specimen?.collectedAt;
  sent.observations.forEach((o, i) => compareFhirObservation(failures, `${where} Observation[${i + 1}]`, sent, o, observations[i], { effective }));
  if (observations.length > sent.observations.length) failures.push(`${where}: ${observations.length - sent.observations.length} Observations more than sent`);
}

// ---------------------------------------------------------------------------------------------------
// Generated messages: a deterministic table (index i picks every variant in turn)

const FLAGS = [['H'], ['HH'], ['L'], ['LL'], ['A'], ['N'], ['<'], ['>'], ['H', 'A'], ['LL', 'A'], []];
const OBX_STATUS = ['F', 'P', 'C', 'W', 'X', 'F'];
const ORDER_STATUS = ['F', 'P', 'C', 'A', 'R', 'F', 'I', 'S', 'O', 'X'];
const TIMES = ['20240305', '202403050830', '20240305083015', '202403050830-0600', '20240305083015+0530', '20240305083015.1234-0500', '2024030508', '202403'];
const OBX_TIMES = ['202403050910-0600', '20240305', '20240305091512+0000', '', '202403051005', '20240305100512.5+0100', '2024030509-0600'];
const UNITS = ['mmol/L^millimole per liter^UCUM', 'mg/dL^^UCUM', '10*3/uL^thousand per microliter^UCUM', 'mg/dL', '%^percent^UCUM', 'U/L^^L'];
const SERVICES = [
  '24323-8^Comprehensive metabolic panel^LN',
  'CBC^Complete blood count^99LAB',
  '^^^BMP^Basic panel^L',
  '57021-8^CBC W Auto Differential panel - Blood^LN^CBCD^CBC with diff^99LAB',
];
const PLACERS = ['ORD-100^CLINIC_EHR', 'ORD-101^^2.16.840.1.113883.19.1^ISO', '', 'P 102 with spaces^EHR'];
const ACCESSION_NS = ['^ACME_LIS', '^^2.16.840.1.113883.3.72^ISO', '', '^LAB-2'];
const PROVIDERS = ['1234567893^Okafor^Ada^^^Dr', 'NPI_0000000001_LONG^Smith^John^Q^III^Dr', '^Nguyen^Lan', ''];

function generatedObx(i: number): Array<{ obx: string; notes: string[] }> {
  const flag = (k: number) => FLAGS[(i + k) % FLAGS.length]!.join('~');
  const status = (k: number) => OBX_STATUS[(i + k) % OBX_STATUS.length]!;
  const time = (k: number) => OBX_TIMES[(i + k) % OBX_TIMES.length]!;
  const units = (k: number) => UNITS[(i + k) % UNITS.length]!;
  const performer = i % 3 === 0 ? 'Acme Reference Laboratory^L^^^^CLIA&2.16.840.1.113883.4.7&ISO^XX^^^05D0642827' : i % 3 === 1 ? 'Regional Lab North' : '';
  const rows: Array<[string, string, string, string, string[]]> = [
    // [value type, OBX-3, OBX-5, OBX-7, NTE after]
    [
      'NM',
      // every third message: the LOINC code without a display (exported as sent: `2823-3^^LN^K^...`, never `2823-3^2823-3^LN`)
      i % 3 === 0 ? '2823-3^^LN^K^Potassium^99ACM' : '2823-3^Potassium^LN^K^Potassium^99ACM',
      ['6.90', '3.5', '+4.20', '0.05', '-1.5', '120'][i % 6]!,
      '3.5-5.1',
      i % 2 ? ['Critical value called to Dr Okafor at 10:02.'] : [],
    ],
    ['SN', '10839-9^Troponin I^LN', ['<^0.01', '>^1000', '<=^5', '>=^2.5', '=^7', '^0.8'][i % 6]!, '<0.04', []],
    ['SN', '2345-7^Glucose^LN', ['^10^-^20', '^1^:^128', '^1^/^40', '^2^+^'][i % 4]!, '', []],
    [
      'CWE',
      '5196-1^Hepatitis B surface antigen^LN',
      ['260385009^Negative^SCT', '10828004^Positive^SCT^POS^Pos^99LAB', 'LA6576-8^Positive^LN', 'DET^Detected^L'][i % 4]!,
      '',
      i % 3 === 0 ? ['Confirmed by neutralization.', 'Second note'] : [],
    ],
    ['CE', i % 2 ? '600-7^^LN' : '600-7^Bacteria identified in Blood by Culture^LN', '3092008^Staphylococcus aureus^SCT', '', []],
    ['ST', '5778-6^Color of Urine^LN', ['Yellow', 'Straw \\T\\ clear', 'see note'][i % 3]!, '', []],
    ['TX', 'PATH-INT^Pathologist interpretation^99ACM', 'Line one~~Line three with \\F\\ pipe~Line four', '', []],
    ['FT', '22634-0^Pathology report.final diagnosis^LN', 'Diagnosis:\\.br\\Benign tissue~Second repetition', '', ['NTE with\\.br\\two lines']],
  ];
  return rows.map(([type, code, value, range, notes], k) => ({
    obx: [
      'OBX',
      String(k + 1),
      type,
      code,
      String(1 + (k % 2)),
      value,
      type === 'NM' || type === 'SN' ? units(k) : '',
      range,
      flag(k),
      '',
      '',
      status(k),
      '',
      '',
      time(k),
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      '',
      k % 2 ? performer : '',
    ].join('|'),
    notes,
  }));
}

function generatedMessage(i: number): { text: string; accession: string } {
  const accession = `GEN-${String(i).padStart(3, '0')}`;
  const resulted = `202403${String(6 + (i % 20)).padStart(2, '0')}1200${String(i % 60).padStart(2, '0')}+0000`;
  // OBR-22 with the offsets and precisions labs write (the offset comes back as sent, not as UTC)
  const day = String(6 + (i % 20)).padStart(2, '0');
  const reported = [
    resulted,
    `202403${day}0700${String(i % 60).padStart(2, '0')}-0500`,
    `202403${day}1730${String(i % 60).padStart(2, '0')}.25+0530`,
    `202403${day}0600-0600`,
  ][i % 4]!;
  const ns = ACCESSION_NS[i % ACCESSION_NS.length]!;
  const obr = [
    'OBR',
    '1',
    PLACERS[i % PLACERS.length]!,
    `${accession}${ns}`,
    SERVICES[i % SERVICES.length]!,
    '',
    '',
    TIMES[i % TIMES.length]!,
    // OBR-8: every fifth message a collection with an end (after every start of TIMES)
    i % 5 === 1 ? '202403060830-0600' : '',
    '',
    '',
    '',
    '',
    '',
    '',
    '',
    PROVIDERS[i % PROVIDERS.length]!,
    '',
    '',
    '',
    '',
    '',
    reported,
    '',
    '',
    ORDER_STATUS[i % ORDER_STATUS.length]!,
  ].join('|');
  const orderNotes =
    i % 4 === 3 ? [] : i % 4 === 2 ? ['NTE|1|L|Specimen slightly hemolyzed.', 'NTE|2|L|Repeat advised~second line'] : ['NTE|1|L|Patient fasting 12 hours.'];
  const obx = generatedObx(i).flatMap(({ obx, notes }) => [obx, ...notes.map((n, k) => `NTE|${k + 1}|L|${n}`)]);
  const spm =
    i % 3 === 2
      ? []
      : [
          `SPM|1|SP-${i}&PLACER^SPC-${i}&ACME_LIS||${i % 2 ? '119364003^Serum specimen^SCT' : '119297000^Blood specimen^SCT'}|||||||||||||${TIMES[(i + 1) % TIMES.length]!}`,
        ];
  const segments = [
    `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|${resulted}||ORU^R01^ORU_R01|GENMSG${i}|P|2.5.1`,
    CHART_PID,
    ...(i % 5 === 4 ? [`ORC|RE|ORC-PL-${i}^ORC_NS`] : []),
    obr,
    ...orderNotes,
    ...obx,
    ...spm,
  ];
  return { text: segments.join('\r') + '\r', accession };
}

/** OBX count of the large panel (issue 27 K2: the summary never drops observations): 199 tests and a document, intake's limit of 200 OBX per OBR. */
const LARGE_PANEL_OBX = 200;
const LARGE_PANEL_TESTS = LARGE_PANEL_OBX - 1;
const LARGE_PANEL_ACCESSION = 'GEN-PANEL-200';
const LARGE_PANEL_DOCUMENT = Buffer.from('Panel report: 200 analytes, see the observations.\n', 'utf8').toString('base64');
/** OBX-23 longer than XON-1's 50 characters (issue 27 K3: kept whole). */
const LONG_PERFORMER = 'Regional Public Health Laboratory of the Northern Counties, Newborn Screening and Molecular Diagnostics Section';

/**
 * A 200-OBX panel well past the summary's inline budget (32 KiB): NM rows with UCUM units and flags, TX rows of
 * 1,500-character lines (beyond the 1,024 characters the summary once cut values to), rows identified by their
 * alternate code only (K5), every row with a long performing organization (K3).
 */
function largePanelMessage(): string {
  const resulted = '20240330120000+0000';
  const obx = Array.from({ length: LARGE_PANEL_TESTS }, (_, k) => {
    const n = k + 1;
    const [type, code, value] =
      k % 10 === 9
        ? ['TX', `PANEL-TX-${n}^Panel narrative ${n}^99LAB`, `${'Narrative '.repeat(150)}${n}~second line ${n}`]
        : k % 10 === 4
          ? ['ST', `^^^ALT-${n}^Alternate-only analyte ${n}^99LAB`, `text ${n}`]
          : ['NM', `PANEL-${n}^Panel analyte ${n}^99LAB`, `${n}.50`];
    const units = type === 'NM' ? 'mg/dL^milligram per deciliter^UCUM' : '';
    const fields = [
      'OBX',
      String(n),
      type,
      code,
      '',
      value,
      units,
      type === 'NM' ? '1-10' : '',
      type === 'NM' && n > 10 ? 'H' : '',
      '',
      '',
      'F',
      '',
      '',
      '202403300900-0500',
    ];
    while (fields.length < 23) fields.push('');
    fields.push(LONG_PERFORMER);
    return [fields.join('|'), ...(k % 25 === 0 ? [`NTE|1|L|Panel note ${n}`] : [])];
  }).flat();
  return (
    [
      `MSH|^~\\&|LIS|DEMO-LAB-LIS|INTEROP|DEMO-HOSP|${resulted}||ORU^R01^ORU_R01|GENPANEL200|P|2.5.1`,
      CHART_PID,
      `OBR|1|ORD-PANEL^CLINIC_EHR|${LARGE_PANEL_ACCESSION}^ACME_LIS|PANEL^Large screening panel^99LAB||||202403300830-0500||||||||||||||${resulted}|||F`,
      'NTE|1|L|A panel of 200 observations.',
      ...obx,
      // and a small document (ED, under 16 KiB): the summary and FHIR carry it whole (K6)
      `OBX|${LARGE_PANEL_OBX}|ED|PANEL-REPORT^Panel report^99LAB||^TEXT^PLAIN^Base64^${LARGE_PANEL_DOCUMENT}||||||F`,
    ].join('\r') + '\r'
  );
}

/** A sample as the partner sends it: PID for the chart patient, MSH-4 the partner's sender, a unique MSH-10. */
function adaptSample(file: string, index: number, senderOf: (accessions: string[]) => string): { text: string; sender: string } {
  const raw = readFileSync(join(SAMPLES, file), 'latin1');
  const lines = raw.split(/\r\n|\r|\n/).filter((l) => l.trim() !== '');
  const message = parseHl7Message(raw);
  const accessions = hl7Groups(message).map((g) => (present(valueAt(g.obr, 3)) ?? valueAt(g.obr, 2)).trim());
  const sender = senderOf(accessions);
  const out = lines.map((line) => {
    if (line.startsWith('PID')) return CHART_PID;
    if (!line.startsWith('MSH')) return line;
    const fields = line.split('|');
    fields[3] = sender;
    fields[9] = `SAMPLE-${index}`;
    return fields.join('|');
  });
  return { text: out.join('\r') + '\r', sender };
}

// --- JSON bodies with every optional field

interface JsonResult {
  testName: string;
  result: string;
  [key: string]: unknown;
}

function jsonBody(i: number): { data: Record<string, unknown> } {
  const times = ['2024-04-01', '2024-04-01T08:30-06:00', '2024-04-01T08:30:15Z', '2024-04-01T08:30:15.250+05:30', '2024-04', '2024', '2024-04-01T08-06:00'];
  const flags = FLAGS[i % FLAGS.length]!;
  const results: JsonResult[] = [
    {
      testName: 'Potassium',
      result: '6.90',
      units: 'millimole per liter',
      unitsCode: 'mmol/L',
      referenceRange: '3.5-5.1',
      code: '2823-3',
      codeSystem: 'LN',
      alternateCode: { code: 'K', display: 'Potassium', system: '99ACM' },
      valueType: 'NM',
      numericValue: '6.90',
      ...(flags.length ? { abnormalFlags: flags } : {}),
      observationStatus: OBX_STATUS[i % OBX_STATUS.length],
      observedAt: times[(i + 1) % times.length],
      // every other body: the test's period ends (FHIR effectivePeriod.end; after every start of times)
      ...(i % 2 ? { observedEndAt: '2024-04-02T06:00-06:00' } : {}),
      performingOrganization: 'Demo Reference Lab',
      comments: ['Critical value called to Dr Smith at 10:50', 'second comment'],
    },
    {
      testName: 'Creatinine',
      result: '<0.5',
      units: 'mg/dL',
      unitsCode: 'mg/dL',
      referenceRange: '0.6-1.2',
      code: '2160-0',
      codeSystem: 'LN',
      valueType: 'SN',
      structuredNumeric: [
        { comparator: '<', value1: '0.5' },
        { value1: '10', separator: '-', value2: '20' },
        { value1: '1', separator: ':', value2: '160' },
      ][i % 3],
      ...(FLAGS[(i + 3) % FLAGS.length]!.length ? { abnormalFlags: FLAGS[(i + 3) % FLAGS.length] } : {}),
      observationStatus: OBX_STATUS[(i + 1) % OBX_STATUS.length],
      // every third body: released apart from the report (FHIR Observation.issued)
      ...(i % 3 === 2 ? { reportedAt: '2024-04-01T09:00:00.5+02:00' } : {}),
    },
    {
      testName: 'HBsAg',
      result: 'Negative',
      code: '5196-1',
      codeSystem: 'LN',
      valueType: i % 2 ? 'CWE' : 'CE',
      codedValue: { code: '260385009', display: 'Negative', system: 'SCT' },
      // every other body: a range whose bounds have units of their own (the coded value has none)
      ...(i % 2 ? { referenceRange: '0-0.9', referenceRangeUnits: 'index value', referenceRangeUnitsCode: '{index}' } : {}),
      abnormalFlags: ['N'],
      observationStatus: 'F',
      observedAt: times[i % times.length],
    },
    {
      testName: 'Interpretation',
      result: 'Line one\nLine two',
      code: 'INT',
      codeSystem: '99ACM',
      valueType: i % 2 ? 'TX' : 'FT',
      textLines: ['Line one', 'Line two'],
      observationStatus: 'P',
      comments: ['Comment with | and ^ and ~ and & and \\'],
    },
    {
      // every third body: a test the lab named by its code only (testNameFrom code: exported without a display)
      ...(i % 3 === 1 ? { testName: '5778-6', testNameFrom: 'code' } : { testName: 'Color' }),
      result: 'Yellow',
      code: '5778-6',
      codeSystem: 'LN',
      valueType: 'ST',
      observationStatus: 'C',
      performingOrganization: 'North Lab',
    },
  ];
  return {
    data: {
      senderID: 'demo-lab',
      patientID: PATIENT,
      accessionNumber: `JSON-${String(i).padStart(3, '0')}`,
      status: ['final', 'preliminary', 'corrected', 'final', 'cancelled'][i % 5],
      // with a fraction when it is OBR-22 (no reportedAt): kept in OBR-22 (DTM: 4 digits) and FHIR issued
      ResultedDateUTC: `2024-04-${String(2 + i).padStart(2, '0')}T17:00:00${i % 3 === 0 ? ['.5', '.125', '.1234'][(i / 3) % 3] : ''}Z`,
      order: {
        placerOrderNumber: i % 2 ? { id: `PL-${i}`, namespace: 'DEMO-EHR' } : { id: `PL-${i}` },
        accessionNamespace: ['DEMO-LAB', '2.16.840.1.113883.3.72', 'LAB_B'][i % 3],
        universalService: [
          { code: '24323-8', display: 'Comprehensive metabolic panel', system: 'LN' },
          { code: 'CMP', display: 'Chem panel', system: 'L' },
          { code: '51990-0', system: 'LN' },
        ][i % 3],
        collectedAt: times[i % times.length],
        // every fourth body a collection with an end (after every start of times)
        ...(i % 4 === 2 ? { collectedEndAt: '2024-04-02T06:00-06:00' } : {}),
        // OBR-22 as the lab wrote it: ResultedDateUTC (17:00Z) at -05:00, or at minutes with +05:30
        ...(i % 3 === 0 ? {} : { reportedAt: `2024-04-${String(2 + i).padStart(2, '0')}T${i % 3 === 1 ? '12:00:00-05:00' : '22:30+05:30'}` }),
        orderingProvider:
          i % 2 ? { id: '1234567893', name: { family: 'Smith', given: 'John', middle: 'Q', suffix: 'Jr', prefix: 'Dr' } } : { name: { family: 'Doe' } },
        orderStatus: ORDER_STATUS[i % ORDER_STATUS.length],
        // every other body: the report's performer (name and identifier, or a name only)
        ...(i % 2 === 0
          ? {
              performer:
                i % 4 === 0
                  ? [{ name: 'Demo Reference Lab', identifier: { id: '05D0642827', namespace: 'urn:oid:2.16.840.1.113883.4.7' } }]
                  : [{ name: 'Demo Reference Lab North' }, { identifier: { id: 'LAB-7' } }],
            }
          : {}),
        specimen: {
          type: { code: '119297000', display: 'Blood specimen', system: 'SCT' },
          collectedAt: times[(i + 2) % times.length],
          id: { id: `SPC-${i}`, namespace: 'DEMO-LAB' },
        },
        comments: i % 2 ? ['Specimen slightly hemolyzed'] : ['first', 'second\nwith two lines'],
      },
      results,
    },
  };
}

function sentFromJson(label: string, body: { data: Record<string, unknown> }): SentResult {
  const data = body.data as Json;
  const order = data.order as Json;
  const results = data.results as Json[];
  return {
    label,
    sender: data.senderID,
    accession: data.accessionNumber,
    accessionNamespace: order.accessionNamespace,
    placer: order.placerOrderNumber,
    service: order.universalService,
    collectedAt: isoTime(order.collectedAt),
    collectedEndAt: isoTime(order.collectedEndAt),
    reportedAt: isoTime(order.reportedAt ?? data.ResultedDateUTC),
    provider: order.orderingProvider ? { id: order.orderingProvider.id, ...order.orderingProvider.name } : undefined,
    orderStatus: order.orderStatus,
    status: data.status,
    specimen: order.specimen ? { type: order.specimen.type, collectedAt: isoTime(order.specimen.collectedAt), id: order.specimen.id } : undefined,
    performers: order.performer,
    comments: order.comments ?? [],
    observations: results.map((r, k): SentObservation => {
      const type = String(r.valueType);
      const sn = r.structuredNumeric ?? {};
      const value: SentObservation['value'] =
        type === 'NM'
          ? { kind: 'NM', text: r.numericValue }
          : type === 'SN'
            ? { kind: 'SN', parts: [sn.comparator ?? '', sn.value1 ?? '', sn.separator ?? '', sn.value2 ?? ''] }
            : type === 'CE' || type === 'CWE'
              ? { kind: 'CE', coding: r.codedValue }
              : type === 'TX' || type === 'FT'
                ? { kind: 'lines', lines: r.textLines }
                : { kind: 'text', text: r.result };
      return {
        where: `${label} results[${k}]`,
        code: r.code,
        name: r.testName,
        display: r.testNameFrom === 'code' ? undefined : r.testName,
        system: r.codeSystem,
        alternate: r.alternateCode,
        type,
        value,
        unitsCode: r.unitsCode,
        units: r.units,
        range: r.referenceRange,
        flags: r.abnormalFlags ?? [],
        status: r.observationStatus,
        observedAt: isoTime(r.observedAt),
        observedEndAt: isoTime(r.observedEndAt),
        reportedAt: isoTime(r.reportedAt),
        rangeUnits: r.referenceRangeUnits,
        rangeUnitsCode: r.referenceRangeUnitsCode,
        performer: r.performingOrganization,
        comments: r.comments ?? [],
      };
    }),
  };
}

// ---------------------------------------------------------------------------------------------------
// Real losses found (issue 27): each is asserted to still fail as described, so fixing one shows here.
// Matching is by substring of the failure line.

const KNOWN_ISSUES: Array<{ id: string; what: string; matches: (failure: string) => boolean }> = [
  {
    id: 'K2',
    what: 'the summary (HL7 summary, FHIR DiagnosticReport) dropped observations beyond its 32 KiB budget (a 148-OBX newborn screen lost its last ones): fixed, a larger summary is stored in summary parts; asserted absent',
    matches: (f) => /\[(summary batch|summary oru|fhir)\] (OBX|Observation)\[\d+\]: sent an (OBX|observation)/.test(f),
  },
  {
    id: 'K3',
    what: 'HL7 exports cut OBX-23.1 (performing organization) to 50 characters (XON-1 length): fixed, written whole; asserted absent',
    matches: (f) => {
      const m = /OBX-23\.1: sent "(.*)", got "(.*)"$/.exec(f);
      return m !== null && m[2]!.length === 50 && m[1]!.startsWith(m[2]!);
    },
  },
  {
    id: 'K4',
    what: 'SN categorical `^2^+^` (separator + without value2) was not kept as a structured numeric (exported as ST "2+"): fixed, kept as a regression guard',
    matches: (f) => f.includes('OBX-2: sent "SN", got "ST"') || /OBX-5: sent "\^\d+\^\+\^", got "\d+\+"/.test(f),
  },
  {
    id: 'K6',
    what: 'an ED document (OBX-5.5 data) was only in GET /exportHl7LabResult, the summary and FHIR left it out: fixed, the summary carries it (ED whole up to 16 KiB, else RP to the single-result export) and FHIR as presentedForm (data, else url); asserted absent',
    matches: (f) => /\[(summary batch|summary oru)\] document OBX/.test(f) || /\[fhir\] .*document \(ED\) in FHIR/.test(f),
  },
  {
    id: 'K5',
    what: 'OBX-3 with only the alternate triplet (`^^^99717-5^Accession Number^L`) got an invented primary code OBSERVATION-n^Observation n^L (FHIR code.text "Observation n"): fixed, kept as sent; asserted absent',
    matches: (f) => /OBX-3\.[123]: sent "", got "(OBSERVATION-\d+|Observation \d+|L)"/.test(f) || /code\.text: sent "", got "Observation \d+"/.test(f),
  },
];

let stack: LocalStack;
/** per result (sender, accession): the OBR groups sent under it (more than one when a message repeats the accession) */
const sent: SentResult[][] = [];
/** OBR groups that never reached an export (another group of the same message has the same accession). */
const shadowed: string[] = [];
/** the FHIR DiagnosticReports the comparison read, for the US Core profile check (issue 27) */
const fhirReports: Json[] = [];

beforeAll(async () => {
  // many public samples are MSH-11 D (debugging): this stage is configured to take them
  process.env[Env.hl7AcceptProcessingIds] = 'P,T,D';
  stack = await startTestStack();
});
afterAll(async () => {
  delete process.env[Env.hl7AcceptProcessingIds];
  await stack?.close();
});

async function postHl7(body: Buffer): Promise<string> {
  const res = await call(stack, 'POST', '/receiveHl7', { headers: { 'x-api-key': 'demo-hl7-key', 'content-type': 'application/hl7-v2' }, body });
  expect(res.status).toBe(200);
  return res.text
    .split('\r')
    .filter((l) => l.startsWith('MSA|') || l.startsWith('ERR|'))
    .join(' / ');
}

async function getText(path: string, key: string, accept = 'application/hl7-v2'): Promise<string> {
  const res = await call(stack, 'GET', path, { headers: { 'x-api-key': key, accept } });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text.slice(0, 300)}`);
  return res.text;
}

/** the summary's largest page (GET /exportHl7PatientSummary `limit`) */
const SUMMARY_LIMIT = 200;

const accessionKey = (sender: string, accession: string) => `${sender}|${accession}`;

describe('issue 27: lab results round trip (intake -> single-result export, summary in both profiles, FHIR)', () => {
  it('posts the samples and the generated ORU^R01 messages (AA or CA) and the JSON bodies (200)', async () => {
    const used = new Set<string>();
    const posts: Array<{ label: string; body: Buffer; sender: string }> = [];
    SAMPLE_FILES.forEach((file, index) => {
      const { text, sender } = adaptSample(file, index, (accessions) =>
        accessions.some((a) => used.has(accessionKey('DEMO-LAB-LIS', a))) ? 'demo-lab' : 'DEMO-LAB-LIS',
      );
      posts.push({
        label: `msg ${index + 1} (${file
          .split('/')
          .pop()!
          .replace(/\.hl7$/, '')})`,
        body: Buffer.from(text, 'latin1'),
        sender,
      });
      for (const g of hl7Groups(parseHl7Message(Buffer.from(text, 'latin1'))))
        used.add(accessionKey(sender, (present(valueAt(g.obr, 3)) ?? valueAt(g.obr, 2)).trim()));
    });
    for (let i = 0; i < 20; i += 1) {
      const { text } = generatedMessage(i);
      posts.push({ label: `msg ${SAMPLE_FILES.length + i + 1} (generated ${i})`, body: Buffer.from(text, 'utf8'), sender: 'DEMO-LAB-LIS' });
    }
    posts.push({
      label: `msg ${SAMPLE_FILES.length + 21} (generated ${LARGE_PANEL_OBX}-OBX panel)`,
      body: Buffer.from(largePanelMessage(), 'utf8'),
      sender: 'DEMO-LAB-LIS',
    });
    const acks: string[] = [];
    for (const post of posts) {
      const ack = await postHl7(post.body);
      // an ERR only as the warning that a time which is no real time was left out (rule below: 20170229)
      const otherErr = ack.split(' / ').some((l) => l.startsWith('ERR|') && !(l.includes('|W|') && l.includes('no valid HL7 date-time')));
      if (!/^MSA\|(AA|CA)\|/.test(ack) || otherErr) acks.push(`${post.label}: ${ack}`);
      messages.hl7 += 1;
      const groups = hl7Groups(parseHl7Message(post.body)).filter((g) => g.obx.length > 0);
      messages.hl7Groups += groups.length;
      // one result per (sender, accession, universal service): of several groups with the same accession and
      // service the last one is expected to be current (groups of one accession with different OBR-4 are results of their own)
      const byAccession = new Map<string, SentResult[]>();
      groups.forEach((g, k) => {
        const result = sentFromGroup(`${post.label} OBR[${k + 1}]`, post.sender, g);
        const key = `${result.accession}\u0000${result.service?.code ?? ''}`;
        byAccession.set(key, [...(byAccession.get(key) ?? []), result]);
      });
      for (const list of byAccession.values()) sent.push(list);
    }
    expect(acks).toEqual([]);
    for (let i = 0; i < 10; i += 1) {
      const body = jsonBody(i);
      const res = await call(stack, 'POST', '/receiveTestData', {
        headers: { 'x-api-key': 'demo-results-key', 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(`${res.status} ${res.status === 200 ? '' : res.text.slice(0, 400)}`).toBe('200 ');
      messages.json += 1;
      sent.push([sentFromJson(`json ${i + 1}`, body)]);
    }
    expect(messages.hl7).toBeGreaterThanOrEqual(30);
  });

  it('compares every sent field with the three exports', async () => {
    expect(sent.length).toBeGreaterThan(0);
    const pickCurrent = (candidates: SentResult[], single: Hl7Group | undefined): SentResult => {
      if (candidates.length === 1) return candidates[0]!;
      const saved = { fields: tally.fields, rules: new Map(tally.rules) };
      const scored = candidates.map((c) => {
        const f: string[] = [];
        compareHl7Group(f, '', c, single);
        return { c, n: f.length };
      });
      tally.fields = saved.fields;
      tally.rules = saved.rules;
      return scored.reduce((best, s) => (s.n < best.n ? s : best)).c;
    };
    const failures: string[] = [];
    // FHIR: the patient's DiagnosticReports (one page of up to 200 holds them all)
    // every page of the search (its `next` links), so no result is missed for being on a later page
    const reports: Json[] = [];
    for (let page: string | undefined = `/fhir/DiagnosticReport?patient=${PATIENT}&_count=200`; page;) {
      const bundle = JSON.parse(await getText(page, 'demo-fhir-key', 'application/fhir+json')) as Json;
      reports.push(...(bundle.entry ?? []).map((e: Json) => e.resource));
      fhirReports.push(...(bundle.entry ?? []).map((e: Json) => e.resource));
      const next = (bundle.link ?? []).find((l: Json) => l.relation === 'next')?.url as string | undefined;
      page = next ? next.slice(next.indexOf('/fhir/')) : undefined;
    }
    // the summary in both profiles
    const batchText = await getText(`/exportHl7PatientSummary?patientId=${PATIENT}&limit=${SUMMARY_LIMIT}`, 'demo-export-key');
    // the batch may hold more messages than intake takes in one batch (100): each message is read on its own
    const batchGroups = batchText
      .split(/\r(?=MSH\|)/)
      .map((part) =>
        part
          .split('\r')
          .filter((segment) => !/^(FHS|BHS|BTS|FTS)\|/.test(segment))
          .join('\r'),
      )
      .filter((part) => part.startsWith('MSH|'))
      .flatMap((part) => hl7Groups(parseHl7Message(`${part}\r`)));
    const oruGroups = hl7Groups(parseHl7Message(await getText(`/exportHl7PatientSummary?patientId=${PATIENT}&limit=${SUMMARY_LIMIT}`, 'demo-export-oru-key')));
    const findGroup = (groups: Hl7Group[], result: SentResult) =>
      groups.find((g) => valueAt(g.obr, 3, 1) === shortIdentifier(result.accession, IDENTIFIER_LENGTH.ei) && g.obx.length > 0 && ownGroup(g, result));
    // OBR-3.2 names the namespace: two senders' identical accession numbers are told apart by it or by OBX-23/the order
    const ownGroup = (g: Hl7Group, result: SentResult) =>
      (!result.accessionNamespace || valueAt(g.obr, 3, 2) === result.accessionNamespace) &&
      (!result.service?.code || valueAt(g.obr, 4, 1) === result.service.code || valueAt(g.obr, 4, 4) === result.service.code);
    const { receiveDependencies } = await import('../../lib/results/result-wiring');
    const keys = (await receiveDependencies().keys())!;
    for (const candidates of sent) {
      const resultId = keys.resultId(candidates[0]!.sender, candidates[0]!.accession, candidates[0]!.service?.code);
      const single = hl7Groups(parseHl7Message(await getText(`/exportHl7LabResult?resultId=${encodeURIComponent(resultId)}`, 'demo-export-key')))[0];
      // several OBR groups under one accession: one result, whose current version is one of the groups
      // (which one is not defined: the versions rank by status and receipt time, then version id); the
      // group the single export shows is compared, the others are counted as never reaching an export
      comparedResultId = resultId;
      const result = pickCurrent(candidates, single);
      for (const other of candidates.filter((c) => c !== result))
        shadowed.push(`${other.label} (accession ${other.accession}, ${other.observations.length} OBX)`);
      compareHl7Group(failures, `${result.label} [single]`, result, single);
      // the summary is the newest SUMMARY_LIMIT records: a result older than those is not in it (by design)
      for (const [label, groups] of [
        ['summary batch', batchGroups],
        ['summary oru', oruGroups],
      ] as const) {
        const group = findGroup(groups, result);
        // both profiles hold the same records; the ORU profile has one OBR group per record, so it tells when the page is full
        if (!group && oruGroups.length >= SUMMARY_LIMIT) rule(`the patient summary holds the newest ${SUMMARY_LIMIT} records: older results are not in it`);
        else compareHl7Group(failures, `${result.label} [${label}]`, result, group);
      }
      const report = reports.find(
        (r) =>
          (r.identifier ?? []).some(
            (id: Json) => id.value === result.accession && String(id.system).startsWith(`urn:interop:sender:${result.sender}:accession`),
          ) &&
          (!result.service?.code || (r.code?.coding ?? []).some((c: Json) => c.code === result.service!.code)),
      );
      compareFhirReport(failures, `${result.label} [fhir]`, result, report);
    }
    tally.failures.push(...failures);
    const known = KNOWN_ISSUES.map((k) => ({ ...k, hits: failures.filter(k.matches) }));
    const unexplained = failures.filter((f) => !KNOWN_ISSUES.some((k) => k.matches(f)));
    const lines = [
      `lab round trip: ${messages.hl7} ORU messages (${messages.hl7Groups} OBR groups with OBX, ${SAMPLE_FILES.length} public samples, ${messages.hl7 - SAMPLE_FILES.length} generated), ${messages.json} JSON bodies`,
      `${sent.length} results compared through 4 exports, ${tally.fields} fields compared, ${failures.length} failures (${unexplained.length} unexplained)`,
      `K1 (fixed: one result per sender, accession and universal service) x${shadowed.length}: OBR groups that never reach an export because another group of the message has the same accession and OBR-4 (e.g. ${shadowed[0] ?? '-'})`,
      ...[...tally.rules.entries()].map(([name, count]) => `  rule x${count}: ${name}`),
      ...known.map((k) => `  KNOWN ${k.id} x${k.hits.length}: ${k.what}${k.hits[0] ? ` (e.g. ${k.hits[0]})` : ''}`),
    ];
    console.log(lines.join('\n'));
    if (process.env.LAB_ROUND_TRIP_DUMP) {
      writeFileSync(process.env.LAB_ROUND_TRIP_DUMP, failures.join('\n'));
      writeFileSync(`${process.env.LAB_ROUND_TRIP_DUMP}.unexplained`, unexplained.join('\n'));
    }
    expect(unexplained.slice(0, 200)).toEqual([]);
    // K2 to K6 (fixed) must stay fixed
    for (const id of ['K2', 'K3', 'K4', 'K5', 'K6']) expect({ id, hits: known.find((k) => k.id === id)!.hits.slice(0, 5) }).toEqual({ id, hits: [] });
    // K2 / K3 / K5 on the 200-OBX panel, counted: every observation in every export, OBX-23 whole, alternate-only OBX-3 as sent
    const panelIn = (groups: Hl7Group[]) => groups.filter((g) => valueAt(g.obr, 3, 1) === LARGE_PANEL_ACCESSION);
    for (const [label, groups] of [
      ['summary batch', batchGroups],
      ['summary oru', oruGroups],
    ] as const) {
      const panel = panelIn(groups);
      // 199 tests, the document's observation row, the document itself (ED, whole: under 16 KiB)
      expect({ label, groups: panel.length, obx: panel[0]?.obx.length }).toEqual({ label, groups: 1, obx: LARGE_PANEL_OBX + 1 });
      expect(
        panel[0]!.obx
          .slice(0, LARGE_PANEL_TESTS)
          .map(({ obx }) => valueAt(obx, 23, 1))
          .filter((name) => name !== LONG_PERFORMER),
      ).toEqual([]);
      const document = panel[0]!.obx[LARGE_PANEL_OBX]!.obx;
      expect([valueAt(document, 2), valueAt(document, 3, 2), valueAt(document, 5, 4), valueAt(document, 5, 5)]).toEqual([
        'ED',
        'Panel report',
        'Base64',
        LARGE_PANEL_DOCUMENT,
      ]);
      expect(panel[0]!.obx[4]!.obx.fields[3]![0]!.map((c) => c.join('&')).join('^')).toBe('^^^ALT-5^Alternate-only analyte 5^99LAB');
      expect(valueAt(panel[0]!.obx[9]!.obx, 5)).toBe(`${'Narrative '.repeat(150)}10`);
    }
    const panelReport = reports.find((r) => (r.identifier ?? []).some((id: Json) => id.value === LARGE_PANEL_ACCESSION));
    expect(panelReport?.result).toHaveLength(LARGE_PANEL_OBX);
    expect(panelReport?.presentedForm).toEqual([{ contentType: 'text/plain', data: LARGE_PANEL_DOCUMENT, size: 50, title: 'Panel report' }]);
    const alternateOnly = (panelReport!.contained as Json[]).find((c) => c.id === 'result-5');
    expect(alternateOnly?.code).toEqual({ coding: [expect.objectContaining({ code: 'ALT-5', display: 'Alternate-only analyte 5' })] });
    expect(
      new Set(
        (panelReport!.contained as Json[])
          .filter((c) => c.resourceType === 'Observation' && c.id !== `result-${LARGE_PANEL_OBX}`)
          .map((c) => c.performer?.[0]?.display),
      ),
    ).toEqual(new Set([LONG_PERFORMER]));
    // K1 fixed: OBR groups of one message sharing an accession but not the universal service are results of their own
    expect(shadowed).toEqual([]);
  });

  it('every FHIR report read back conforms to US Core DiagnosticReport (Lab), its Observations to Laboratory Result Observation', () => {
    expect(fhirReports.length).toBeGreaterThanOrEqual(40);
    expect(fhirReports.flatMap((r) => usCoreLabViolations(r).map((v) => `${String(r.id)}: ${v}`))).toEqual([]);
  });
});
