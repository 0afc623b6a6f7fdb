/**
 * Receiver rules on top of the v2.5.1 structure validator (structure-validator.ts): what an interface
 * engineer onboarding a receiving engine (Epic Bridges, Cerner, Mirth, Rhapsody) checks beyond a valid
 * structure (hl7-notes.md, "What receiving engines need beyond a valid structure"; issue 13).
 * Independent of lib/hl7 (imports nothing from there); field data types come from hl7-dictionary.
 *
 * Rules (issue code `receiver`):
 * - offset: every TS/DTM with a time (more than 8 digits) ends with an explicit offset `+HHMM`/`-HHMM`
 *   (a date alone, such as PID-7 birth date, is a calendar date and needs none);
 * - result groups: in ORU_R01 every OBR has OBR-7 and OBR-25; an ORC with ORC-1 `RE` is followed by
 *   at least one OBX in its group;
 * - no formatting commands (`\.br\`, `\.sp\`, `\H\`...) in TX values: the line break of TX is the repetition;
 * - OBX-3 coded: identifier (OBX-3.1) and coding system (OBX-3.3) both valued;
 * - ST values in OBX-5 at most 199 characters (longer text goes as TX);
 * - lengths: CX-1 (PID-3, PV1-19) and XCN-1 (every XCN and PPN) at most 15, EI-1 of OBR-2/OBR-3/ORC-2/
 *   ORC-3 at most 22, TXA-12 at most 30 in all; namespaces: XCN-9 with every XCN-1, EI-2 with every
 *   EI-1 of those fields and TXA-12, CX-4 with every CX-1;
 * - table 0396: `I10` (WHO ICD-10) never used for diagnoses (the chart's codes are ICD-10-CM: `I10C`);
 * - MSH-15 and MSH-16 valued (`NE`: the exports expect no acknowledgment);
 * - PID-5 name type (XPN-7) `L`; PID-11 address type (XAD-7) valued; a North American phone number in
 *   PID-13 also in XTN-5/6/7.
 *
 * {@link validateExport} validates a single message or a batch file (FHS BHS {MSH...} BTS FTS: BTS-1 the
 * message count, FTS-1 the batch count, distinct MSH-10s), each message through both validators.
 */
import definitions from 'hl7-dictionary/lib/2.5.1/index.js';
import { type ValidationIssue, validateHl7Message } from './structure-validator';

interface Segment {
  name: string;
  /** index = field number; MSH-1 is `|` */
  fields: string[];
  position: number;
}

function parseSegments(text: string): Segment[] {
  return text
    .split('\r')
    .filter((line) => line !== '')
    .map((line, index) => {
      const parts = line.split('|');
      const name = parts[0] ?? '';
      const fields = name === 'MSH' || name === 'FHS' || name === 'BHS' ? [name, '|', ...parts.slice(1)] : parts;
      return { name, fields, position: index + 1 };
    });
}

const FORMATTING_BODY = /^(?:\.[a-z]{2}[+-]?\d*|H|N)$/;

/** True when a value holds a formatting escape, found by reading escape sequences left to right. */
function hasFormattingCommand(value: string): boolean {
  let index = 0;
  for (;;) {
    const open = value.indexOf('\\', index);
    if (open < 0) return false;
    const close = value.indexOf('\\', open + 1);
    if (close < 0) return false;
    if (FORMATTING_BODY.test(value.slice(open + 1, close))) return true;
    index = close + 1;
  }
}
const OFFSET = /[+-]\d{4}$/;

function issue(issues: ValidationIssue[], location: string, message: string): void {
  issues.push({ code: 'receiver' as ValidationIssue['code'], location, message });
}

/** Walks a value of `datatype`, calling `visit` for every primitive value with its data type. */
function walk(datatype: string, value: string, depth: number, location: string, visit: (datatype: string, value: string, location: string) => void): void {
  if (value === '') {
    return;
  }
  const subfields = definitions.fields[datatype]?.subfields ?? [];
  if (subfields.length === 0 || depth >= 2) {
    visit(datatype, value, location);
    return;
  }
  value.split(depth === 0 ? '^' : '&').forEach((part, index) => {
    const subfield = subfields[index];
    if (subfield) {
      walk(subfield.datatype, part, depth + 1, `${location}.${index + 1}`, visit);
    }
  });
}

function fieldDatatype(segment: Segment, fieldNumber: number): string | undefined {
  if (segment.name === 'OBX' && fieldNumber === 5) {
    return segment.fields[2] || 'ST';
  }
  return definitions.segments[segment.name]?.fields[fieldNumber - 1]?.datatype;
}

function components(value: string): string[] {
  return value.split('^');
}

function checkIdentifierLengths(issues: ValidationIssue[], segment: Segment): void {
  const where = `${segment.name}[${segment.position}]`;
  const cxFields: Record<string, number[]> = { PID: [3], PV1: [19] };
  for (const field of cxFields[segment.name] ?? []) {
    for (const repetition of (segment.fields[field] ?? '').split('~').filter(Boolean)) {
      const [id = '', , , authority = ''] = components(repetition);
      if (id.length > 15) issue(issues, `${where}-${field}.1`, `CX-1 ${JSON.stringify(id)} is longer than 15`);
      if (id !== '' && authority === '') issue(issues, `${where}-${field}.4`, 'CX-1 without its assigning authority (CX-4)');
    }
  }
  const eiFields: Record<string, number[]> = { OBR: [2, 3], ORC: [2, 3], TXA: [12] };
  for (const field of eiFields[segment.name] ?? []) {
    const value = segment.fields[field] ?? '';
    const [id = '', namespace = ''] = components(value);
    const max = segment.name === 'TXA' ? 30 : 22;
    if ((segment.name === 'TXA' ? value.length : id.length) > max) issue(issues, `${where}-${field}`, `${segment.name}-${field} is longer than ${max}`);
    if (id !== '' && namespace === '') issue(issues, `${where}-${field}.2`, `EI-1 without its namespace (EI-2)`);
  }
  segment.fields.forEach((text, fieldNumber) => {
    const datatype = fieldDatatype(segment, fieldNumber);
    if ((datatype !== 'XCN' && datatype !== 'PPN') || !text || fieldNumber === 0) return;
    for (const repetition of text.split('~')) {
      const parts = components(repetition);
      const id = parts[0] ?? '';
      if (id.length > 15) issue(issues, `${where}-${fieldNumber}.1`, `XCN-1 ${JSON.stringify(id)} is longer than 15`);
      if (id !== '' && !parts[8]) issue(issues, `${where}-${fieldNumber}.9`, 'XCN-1 without its assigning authority (XCN-9)');
    }
  });
}

function checkValues(issues: ValidationIssue[], segment: Segment): void {
  const where = `${segment.name}[${segment.position}]`;
  segment.fields.forEach((text, fieldNumber) => {
    if (fieldNumber === 0 || !text) return;
    if ((segment.name === 'MSH' || segment.name === 'FHS' || segment.name === 'BHS') && fieldNumber <= 2) return;
    const datatype = fieldDatatype(segment, fieldNumber);
    if (!datatype) return;
    text.split('~').forEach((repetition, index) => {
      walk(datatype, repetition, 0, `${where}-${fieldNumber}(${index + 1})`, (primitive, value, location) => {
        if (primitive === 'DTM' && /^\d{9,}/.test(value) && !OFFSET.test(value)) {
          issue(issues, location, `time stamp ${value} has no offset`);
        }
        if (primitive === 'TX' && hasFormattingCommand(value)) {
          issue(issues, location, 'formatting command in TX (a TX line break is a repetition)');
        }
        if (primitive === 'ST' && segment.name === 'OBX' && fieldNumber === 5 && value.length > 199) {
          issue(issues, location, `ST value of ${value.length} characters (at most 199; longer text goes as TX)`);
        }
      });
    });
  });
}

/** The receiver rules of one message (not a batch). */
export function receiverRuleIssues(message: string): ValidationIssue[] {
  const issues: ValidationIssue[] = [];
  const segments = parseSegments(message);
  const msh = segments[0];
  if (!msh || msh.name !== 'MSH') {
    issue(issues, 'MSH', 'not a message');
    return issues;
  }
  if (!msh.fields[15] || !msh.fields[16]) issue(issues, 'MSH-15', 'MSH-15 and MSH-16 (acknowledgment types) must be valued');
  const structure = (msh.fields[9] ?? '').split('^')[2];
  segments.forEach((segment, index) => {
    const where = `${segment.name}[${segment.position}]`;
    checkValues(issues, segment);
    checkIdentifierLengths(issues, segment);
    if (segment.name === 'OBR' && structure === 'ORU_R01') {
      if (!segment.fields[7]) issue(issues, `${where}-7`, 'OBR-7 (observation time) is required in a result message');
      if (!segment.fields[25]) issue(issues, `${where}-25`, 'OBR-25 (result status) is required in a result message');
    }
    if (segment.name === 'ORC' && segment.fields[1] === 'RE') {
      let next = index + 1;
      let observations = 0;
      while (next < segments.length && segments[next]!.name !== 'ORC' && !(segments[next]!.name === 'OBR' && next > index + 1)) {
        if (segments[next]!.name === 'OBX') observations += 1;
        next += 1;
      }
      if (observations === 0) issue(issues, `${where}-1`, 'ORC-1 RE (observations follow) without any OBX');
    }
    if (segment.name === 'ORC' && segment.fields[1] === 'SC') {
      // an order sent without results (issue 27 item 7): ORC-5 and OBR-25 agree and neither promises results
      const obr = segments[index + 1]?.name === 'OBR' ? segments[index + 1]! : undefined;
      const orderStatus = segment.fields[5] ?? '';
      const resultStatus = obr?.fields[25] ?? '';
      const expected: Record<string, string> = { '': 'O', CA: 'X', DC: 'X', RP: 'X', ER: 'X', SC: 'S', IP: 'I', A: 'I', HD: 'O' };
      if (!(orderStatus in expected)) issue(issues, `${where}-5`, `ORC-5 ${orderStatus} beside ORC-1 SC: the order has no results (CM promises them)`);
      else if (expected[orderStatus] !== resultStatus)
        issue(issues, `${where}-5`, `ORC-5 ${orderStatus || '(empty)'} beside OBR-25 ${resultStatus || '(empty)'}: expected OBR-25 ${expected[orderStatus]}`);
    }
    if (segment.name === 'OBX') {
      // coded in the primary triplet, or (as a lab sent it: issue 27 K5) in the alternate triplet only, with the primary empty
      const [code = '', text = '', system = '', altCode = '', , altSystem = ''] = components(segment.fields[3] ?? '');
      const alternateOnly = code === '' && text === '' && system === '' && altCode !== '' && altSystem !== '';
      if (!alternateOnly && (code === '' || system === '')) issue(issues, `${where}-3`, 'OBX-3 must be coded (identifier and coding system)');
    }
    if (segment.name === 'DG1' && components(segment.fields[3] ?? '')[2] === 'I10') {
      issue(issues, `${where}-3.3`, 'I10 is WHO ICD-10; ICD-10-CM is I10C');
    }
    if (
      segment.name === 'OBX' &&
      segment.fields[2] === 'CE' &&
      components(segment.fields[3] ?? '')[0] === 'DIAGNOSIS' &&
      components(segment.fields[5] ?? '')[2] === 'I10'
    ) {
      issue(issues, `${where}-5.3`, 'I10 is WHO ICD-10; ICD-10-CM is I10C');
    }
    if (segment.name === 'PID') {
      for (const name of (segment.fields[5] ?? '').split('~').filter(Boolean)) {
        if (components(name)[6] !== 'L') issue(issues, `${where}-5.7`, 'PID-5 without name type L');
      }
      for (const address of (segment.fields[11] ?? '').split('~').filter(Boolean)) {
        if (!components(address)[6]) issue(issues, `${where}-11.7`, 'PID-11 without address type');
      }
      for (const phone of (segment.fields[13] ?? '').split('~').filter(Boolean)) {
        const parts = components(phone);
        const digits = (parts[0] ?? '').replace(/\D/g, '');
        const northAmerican =
          parts[2] === 'PH' && (digits.length === 10 || (digits.length === 11 && digits.startsWith('1'))) && !/[a-wyz]/i.test(parts[0] ?? '');
        if (northAmerican && (!parts[5] || !parts[6])) issue(issues, `${where}-13.6`, 'North American number without XTN-6/XTN-7');
      }
    }
  });
  return issues;
}

export interface ExportReport {
  valid: boolean;
  /** MSH-9.3 of each message, in order */
  structures: string[];
  issues: ValidationIssue[];
}

/** Splits a batch file into its messages (each starting at MSH), after FHS/BHS and before BTS/FTS. */
export function batchMessages(text: string): { envelope: Segment[]; messages: string[] } {
  const lines = text.split('\r').filter((line) => line !== '');
  const envelope: Segment[] = [];
  const messages: string[] = [];
  let current: string[] | undefined;
  lines.forEach((line, index) => {
    const name = line.slice(0, 3);
    if (name === 'FHS' || name === 'BHS' || name === 'BTS' || name === 'FTS') {
      if (current) messages.push(`${current.join('\r')}\r`);
      current = undefined;
      envelope.push(parseSegments(line).map((segment) => ({ ...segment, position: index + 1 }))[0]!);
      return;
    }
    if (name === 'MSH') {
      if (current) messages.push(`${current.join('\r')}\r`);
      current = [];
    }
    current?.push(line);
  });
  if (current) messages.push(`${current.join('\r')}\r`);
  return { envelope, messages };
}

/** Structure validator and receiver rules for a single message or a batch file. */
export function validateExport(text: string): ExportReport {
  if (!text.startsWith('FHS|')) {
    const report = validateHl7Message(text);
    const issues = [...report.issues, ...receiverRuleIssues(text)];
    return { valid: issues.length === 0, structures: report.structure ? [report.structure] : [], issues };
  }
  const issues: ValidationIssue[] = [];
  const { envelope, messages } = batchMessages(text);
  const names = envelope.map((segment) => segment.name).join(',');
  if (names !== 'FHS,BHS,BTS,FTS') issue(issues, 'batch', `batch envelope is ${names}, expected FHS,BHS,BTS,FTS`);
  if (!text.endsWith('\r') || text.includes('\n')) issue(issues, 'batch', 'segments end with CR only');
  const lines = text.split('\r').filter(Boolean);
  if (!lines[0]?.startsWith('FHS|^~\\&|') || !lines[1]?.startsWith('BHS|^~\\&|')) issue(issues, 'batch', 'FHS then BHS, each with ^~\\& as field 2');
  if (lines.at(-2)?.split('|')[0] !== 'BTS' || lines.at(-1)?.split('|')[0] !== 'FTS') issue(issues, 'batch', 'BTS then FTS end the file');
  const bts = envelope.find((segment) => segment.name === 'BTS');
  const fts = envelope.find((segment) => segment.name === 'FTS');
  if (bts?.fields[1] !== String(messages.length)) issue(issues, 'BTS-1', `BTS-1 is ${bts?.fields[1]}, the batch holds ${messages.length} messages`);
  if (fts?.fields[1] !== '1') issue(issues, 'FTS-1', 'FTS-1 must be 1 (one batch)');
  for (const header of envelope.filter((segment) => segment.name === 'FHS' || segment.name === 'BHS')) {
    checkValues(issues, header);
  }
  const structures: string[] = [];
  const controlIds = new Set<string>();
  messages.forEach((message, index) => {
    const report = validateHl7Message(message);
    structures.push(report.structure ?? '?');
    for (const found of [...report.issues, ...receiverRuleIssues(message)]) {
      issues.push({ ...found, location: `message ${index + 1}: ${found.location}` });
    }
    const controlId = message.split('\r')[0]?.split('|')[9] ?? '';
    if (controlIds.has(controlId)) issue(issues, `message ${index + 1}: MSH-10`, `MSH-10 ${controlId} repeats within the batch`);
    controlIds.add(controlId);
  });
  if (messages.length === 0) issue(issues, 'batch', 'a batch without messages');
  return { valid: issues.length === 0, structures, issues };
}
