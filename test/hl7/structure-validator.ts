/**
 * An HL7 v2.5.1 message validator built from the published v2.5.1 definitions in the `hl7-dictionary`
 * package, independent of the encoder in lib/hl7 (it imports nothing from there).
 *
 * Given a message string it checks:
 * - framing: starts with `MSH|^~\&|`, every segment (the last one too) ends with CR, no LF, no empty
 *   segment, no control characters, known segment names;
 * - MSH: MSH-9 has all three components, the message code / trigger event / structure are in tables
 *   0076 / 0003 / 0354 and agree with one another (0354 lists the events of each structure), MSH-10
 *   present and at most 20 characters, MSH-12 `2.5.1`, MSH-18 a Unicode character set whenever the
 *   message holds a character outside ASCII;
 * - the abstract message structure of MSH-9.3, from the dictionary: required segments present, every
 *   segment in an allowed position, repeats only where the structure allows them;
 * - every field of every segment against the dictionary's segment definition: required fields filled,
 *   no field beyond the definition, repetitions only in repeating fields, components and subcomponents
 *   within their data type, primitive formats (DT, DTM, NM, SI), coded values in their tables (see
 *   {@link CHECKED_TABLES}), OBX-5 against the data type named in OBX-2;
 * - escape sequences well-formed (`\F\ \S\ \T\ \R\ \E\`, hex, charset, and formatting commands such as
 *   `\.br\`, the latter only in formatted text: TX, FT, CF);
 * - set ids: PID-1 and PV1-1 are 1; OBR-1, NK1-1 and DG1-1 count 1..n through the message; OBX-1 counts
 *   1..n within its group.
 *
 * Dictionary data quirks handled here (each one commented where it is handled):
 * - field `opt` is 1 = optional, 2 = required (the package README says otherwise);
 * - the tables are shared by all versions and follow a later version for table 0125 (they list CWE and
 *   DTM, and lack CE and TS), so table 0125 is taken from hl7-notes.md (the v2.5.1 table);
 * - table 0396 lacks the v2.5.1 entries `L`, `99zzz` (local) and `HL7nnnn` (HL7 tables), added here, and
 *   `I10C` (ICD-10-CM), which hl7-notes.md names for ICD-10-CM codes (later versions of table 0396 list it);
 * - OBX-2 carries `rep: 125` (its table number), which only makes the repetition check lenient there;
 * - choices (`compounds`, e.g. ORM_O01's OBR/RQD/... choice) carry min 0 / max 0 in the data; they are
 *   read as written (lenient). None of the structures the encoder writes contains one.
 * The dictionary's structures of ADT_A01, ADT_A05, MDM_T02 and ORU_R01 are complete; the validator's
 * tests compare them with the structures written out in hl7-notes.md.
 */
import definitions from 'hl7-dictionary/lib/2.5.1/index.js';
import tables from 'hl7-dictionary/lib/tables.js';

export type IssueCode =
  | 'framing'
  | 'unknown-segment'
  | 'message-type'
  | 'missing-segment'
  | 'segment-order'
  | 'required-field'
  | 'too-many-fields'
  | 'repetition'
  | 'too-many-components'
  | 'table-value'
  | 'data-type'
  | 'escape'
  | 'set-id'
  | 'character-set';

export interface ValidationIssue {
  code: IssueCode;
  /** e.g. `PID[1]-5.2` (segment, its position in the message, field, component) */
  location: string;
  message: string;
}

export interface ValidationReport {
  valid: boolean;
  /** MSH-9.3 */
  structure: string | undefined;
  segmentNames: string[];
  issues: ValidationIssue[];
}

// --- Tables ------------------------------------------------------------------------------------------------

/** v2.5.1 table 0125 as hl7-notes.md lists it (the dictionary's shared table is a later version's). */
const TABLE_0125_V251 = [
  'AD',
  'CE',
  'CF',
  'CK',
  'CN',
  'CP',
  'CX',
  'DT',
  'ED',
  'FT',
  'MO',
  'NM',
  'PN',
  'RP',
  'SN',
  'ST',
  'TM',
  'TN',
  'TS',
  'TX',
  'XAD',
  'XCN',
  'XON',
  'XPN',
  'XTN',
];

/**
 * The tables whose values are checked: the ones hl7-notes.md lists (0001, 0004, 0085, 0125, 0191, 0271,
 * 0273, 0354) and the other HL7-defined tables of fields the exports fill.
 */
export const CHECKED_TABLES: readonly number[] = [
  1, 3, 4, 38, 52, 76, 78, 85, 103, 104, 119, 123, 125, 136, 190, 191, 200, 201, 202, 203, 211, 270, 271, 273, 354, 396,
];

function tableAllows(table: number, value: string): boolean {
  if (table === 125) {
    return TABLE_0125_V251.includes(value);
  }
  if (table === 396 && (value === 'L' || value === 'I10C' || /^99[A-Za-z0-9]{3}$/.test(value) || /^HL7\d{4}$/.test(value))) {
    // table 0396 entries missing from the dictionary's data: local codes, HL7-table codes, ICD-10-CM.
    return true;
  }
  const entry = tables[String(table)];
  return entry !== undefined && Object.prototype.hasOwnProperty.call(entry.values, value);
}

/** The values of a table as the validator uses them (for tests comparing with hl7-notes.md). */
export function tableValues(table: number): string[] {
  return table === 125 ? [...TABLE_0125_V251] : Object.keys(tables[String(table)]?.values ?? {});
}

// --- Abstract message structures ---------------------------------------------------------------------------

export type StructureNode =
  | { kind: 'segment'; name: string; min: number; max: number }
  | { kind: 'group'; name: string; min: number; max: number; children: StructureNode[] }
  | { kind: 'choice'; name: string; min: number; max: number; options: StructureNode[] };

function toStructureNode(node: Hl7DictionaryStructureNode): StructureNode {
  const max = node.max === 0 ? Number.POSITIVE_INFINITY : node.max;
  if (node.children) {
    return { kind: 'group', name: node.name, min: node.min, max, children: node.children.map(toStructureNode) };
  }
  if (node.compounds) {
    return { kind: 'choice', name: node.name, min: node.min, max, options: node.compounds.map(toStructureNode) };
  }
  return { kind: 'segment', name: node.name, min: node.min, max };
}

/** The abstract message structure of a v2.5.1 message structure id (e.g. `ORU_R01`), from the dictionary. */
export function messageStructure(structureId: string): StructureNode[] | undefined {
  const message = definitions.messages[structureId];
  return message ? message.segments.segments.map(toStructureNode) : undefined;
}

/**
 * Matches a segment-name sequence against a structure: the set of positions where a match of
 * `nodes` starting at `start` can end. Memoized; every repetition must consume at least one segment.
 */
class StructureMatcher {
  /** the furthest segment index that some path matched, for error reporting */
  furthest = 0;
  private readonly nodeMemo = new Map<StructureNode, Map<number, Set<number>>>();
  private readonly sequenceMemo = new Map<StructureNode[], Map<string, Set<number>>>();

  constructor(private readonly names: readonly string[]) {}

  sequence(nodes: StructureNode[], index: number, start: number): Set<number> {
    let memo = this.sequenceMemo.get(nodes);
    if (!memo) {
      memo = new Map();
      this.sequenceMemo.set(nodes, memo);
    }
    const key = `${index}:${start}`;
    const cached = memo.get(key);
    if (cached) {
      return cached;
    }
    const result = new Set<number>();
    if (index === nodes.length) {
      result.add(start);
    } else {
      for (const end of this.node(nodes[index] as StructureNode, start)) {
        for (const last of this.sequence(nodes, index + 1, end)) {
          result.add(last);
        }
      }
    }
    memo.set(key, result);
    return result;
  }

  private node(node: StructureNode, start: number): Set<number> {
    let memo = this.nodeMemo.get(node);
    if (!memo) {
      memo = new Map();
      this.nodeMemo.set(node, memo);
    }
    const cached = memo.get(start);
    if (cached) {
      return cached;
    }
    const result = new Set<number>();
    if (node.min === 0) {
      result.add(start);
    }
    let frontier = new Set([start]);
    const seen = new Set<number>();
    for (let count = 1; count <= node.max && frontier.size > 0; count += 1) {
      const next = new Set<number>();
      for (const position of frontier) {
        for (const end of this.once(node, position)) {
          if (end > position && !(count > node.min && seen.has(end))) {
            next.add(end);
          }
        }
      }
      if (count >= node.min) {
        for (const end of next) {
          result.add(end);
          seen.add(end);
        }
      }
      frontier = next;
    }
    memo.set(start, result);
    return result;
  }

  private once(node: StructureNode, start: number): Set<number> {
    switch (node.kind) {
      case 'segment':
        if (this.names[start] === node.name) {
          this.furthest = Math.max(this.furthest, start + 1);
          return new Set([start + 1]);
        }
        return new Set();
      case 'group':
        return this.sequence(node.children, 0, start);
      case 'choice': {
        const ends = new Set<number>();
        for (const option of node.options) {
          for (const end of this.node(option, start)) {
            ends.add(end);
          }
        }
        return ends;
      }
    }
  }
}

/** Segments every message of the structure must contain (required all the way down from the root). */
function alwaysRequiredSegments(nodes: StructureNode[], into = new Set<string>()): Set<string> {
  for (const node of nodes) {
    if (node.min < 1) {
      continue;
    }
    if (node.kind === 'segment') {
      into.add(node.name);
    } else if (node.kind === 'group') {
      alwaysRequiredSegments(node.children, into);
    }
  }
  return into;
}

// --- Data types --------------------------------------------------------------------------------------------

const FORMATTED_TEXT_TYPES = new Set(['TX', 'FT', 'CF']);

const PRIMITIVE_FORMATS: Record<string, RegExp> = {
  DT: /^\d{4}(?:\d{2}(?:\d{2})?)?$/,
  DTM: /^\d{4}(?:\d{2}(?:\d{2}(?:\d{2}(?:\d{2}(?:\d{2}(?:\.\d{1,4})?)?)?)?)?)?(?:[+-]\d{4})?$/,
  NM: /^[+-]?(?:\d+(?:\.\d*)?|\.\d+)$/,
  SI: /^\d+$/,
};

const DELIMITER_ESCAPE = /^[FSTRE]$/;
const HEX_ESCAPE = /^X(?:[0-9A-Fa-f]{2})+$/;
const CHARSET_ESCAPE = /^(?:C[0-9A-Fa-f]{4}|M[0-9A-Fa-f]{4}(?:[0-9A-Fa-f]{2})?|Z.+)$/;
const HIGHLIGHT_ESCAPE = /^[HN]$/;
const FORMATTING_COMMAND = /^\.(?:br|fi|nf|ce|sp\d*|sk\d*|in[+-]?\d+|ti[+-]?\d+)$/;

/** Problems with the escape sequences of one primitive value ('' when none). */
function escapeProblem(value: string, formatted: boolean): string {
  let index = 0;
  while (index < value.length) {
    const open = value.indexOf('\\', index);
    if (open < 0) {
      return '';
    }
    const close = value.indexOf('\\', open + 1);
    if (close < 0) {
      return 'unterminated escape sequence';
    }
    const body = value.slice(open + 1, close);
    if (FORMATTING_COMMAND.test(body) || HIGHLIGHT_ESCAPE.test(body)) {
      if (!formatted) {
        return `formatting escape \\${body}\\ outside formatted text`;
      }
    } else if (!(DELIMITER_ESCAPE.test(body) || HEX_ESCAPE.test(body) || CHARSET_ESCAPE.test(body))) {
      return `malformed escape sequence \\${body}\\`;
    }
    index = close + 1;
  }
  return '';
}

interface Checker {
  issue(code: IssueCode, location: string, message: string): void;
}

/**
 * Checks one value (a repetition, component or subcomponent) against a data type.
 * `depth` 0 = field repetition (components split on `^`), 1 = component (subcomponents on `&`),
 * 2 = subcomponent (no further splitting).
 */
function checkValue(checker: Checker, datatype: string, value: string, location: string, depth: number, table: number | undefined): void {
  if (value === '') {
    return;
  }
  const subfields = definitions.fields[datatype]?.subfields ?? [];
  const composite = subfields.length > 0 && depth < 2;
  if (!composite) {
    if ((depth === 0 && value.includes('^')) || (depth <= 1 && value.includes('&'))) {
      checker.issue('too-many-components', location, `${datatype} is a primitive type but has components`);
    }
    const formatted = FORMATTED_TEXT_TYPES.has(datatype);
    const problem = escapeProblem(value, formatted);
    if (problem) {
      checker.issue('escape', location, problem);
    }
    const format = PRIMITIVE_FORMATS[datatype];
    if (format && !format.test(value)) {
      checker.issue('data-type', location, `${JSON.stringify(value)} is not a valid ${datatype}`);
    }
    if (table !== undefined && CHECKED_TABLES.includes(table) && !tableAllows(table, value)) {
      checker.issue('table-value', location, `${JSON.stringify(value)} is not in HL7 table ${String(table).padStart(4, '0')}`);
    }
    return;
  }
  const separator = depth === 0 ? '^' : '&';
  const parts = value.split(separator);
  if (parts.length > subfields.length) {
    checker.issue('too-many-components', location, `${parts.length} components, ${datatype} has ${subfields.length}`);
  }
  parts.forEach((part, index) => {
    const subfield = subfields[index];
    if (!subfield) {
      return;
    }
    // A table attached to a composite field applies to its first component (e.g. a CE's identifier).
    const componentTable = subfield.table ?? (index === 0 ? table : undefined);
    checkValue(checker, subfield.datatype, part, `${location}.${index + 1}`, depth + 1, componentTable);
  });
}

// --- Segments ----------------------------------------------------------------------------------------------

interface ParsedSegment {
  name: string;
  /** index = field number (1-based); for MSH, [1] is `|` and [2] the encoding characters */
  fields: string[];
  position: number;
}

function parseSegment(text: string, position: number): ParsedSegment {
  const parts = text.split('|');
  const name = parts[0] ?? '';
  if (name === 'MSH') {
    return { name, fields: ['MSH', '|', ...parts.slice(1)], position };
  }
  return { name, fields: parts, position };
}

function checkSegmentFields(checker: Checker, segment: ParsedSegment): void {
  const definition = definitions.segments[segment.name];
  if (!definition) {
    return;
  }
  const where = `${segment.name}[${segment.position}]`;
  const lastField = segment.fields.length - 1;
  if (lastField > definition.fields.length) {
    checker.issue('too-many-fields', where, `${lastField} fields, ${segment.name} defines ${definition.fields.length}`);
  }
  definition.fields.forEach((field, index) => {
    const fieldNumber = index + 1;
    const location = `${where}-${fieldNumber}`;
    if (segment.name === 'MSH' && fieldNumber <= 2) {
      return; // MSH-1 and MSH-2 are the delimiters, checked with the framing
    }
    const text = segment.fields[fieldNumber] ?? '';
    if (text === '') {
      if (field.opt === 2) {
        checker.issue('required-field', location, `${segment.name}-${fieldNumber} (${field.desc}) is required`);
      }
      return;
    }
    const repetitions = text.split('~');
    if (field.rep !== 0 && repetitions.length > field.rep) {
      checker.issue('repetition', location, `${segment.name}-${fieldNumber} repeats ${repetitions.length} times, at most ${field.rep} allowed`);
    }
    let datatype = field.datatype;
    if (segment.name === 'OBX' && fieldNumber === 5) {
      // OBX-5 (VARIES) has the data type OBX-2 names.
      datatype = segment.fields[2] ?? 'ST';
      if (!TABLE_0125_V251.includes(datatype)) {
        return; // OBX-2 itself is reported through table 0125
      }
    }
    repetitions.forEach((repetition, repetitionIndex) => {
      const repLocation = repetitions.length > 1 ? `${location}(${repetitionIndex + 1})` : location;
      checkValue(checker, datatype, repetition, repLocation, 0, field.table);
    });
  });
}

// --- The message -------------------------------------------------------------------------------------------

const NON_ASCII = /[^\u0000-\u007F]/;
// Control characters other than the CR segment terminator (already split off).
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F]/;

function parseEventList(description: string): string[] {
  return description.split(/[\s,]+/).filter((event) => /^[A-Z0-9]{3}$/.test(event));
}

function checkHeader(checker: Checker, msh: ParsedSegment, text: string): string | undefined {
  if (msh.fields[2] !== '^~\\&') {
    checker.issue('framing', 'MSH-2', 'MSH-2 must be exactly ^~\\&');
  }
  const messageType = (msh.fields[9] ?? '').split('^');
  const [code, event, structure] = messageType;
  if (messageType.length !== 3 || !code || !event || !structure) {
    checker.issue('message-type', 'MSH-9', 'MSH-9 must carry message code, trigger event and message structure');
    return undefined;
  }
  const structureEvents = tables['354']?.values[structure];
  if (structureEvents === undefined) {
    checker.issue('message-type', 'MSH-9.3', `${structure} is not a message structure of table 0354`);
    return undefined;
  }
  if (!parseEventList(structureEvents).includes(event) || !structure.startsWith(`${code}_`)) {
    checker.issue('message-type', 'MSH-9', `${code}^${event} does not use structure ${structure} (table 0354: ${structureEvents})`);
  }
  const controlId = msh.fields[10] ?? '';
  if (controlId.length > 20) {
    checker.issue('data-type', 'MSH-10', 'MSH-10 is longer than 20 characters');
  }
  if (msh.fields[12] !== '2.5.1') {
    checker.issue('message-type', 'MSH-12', 'MSH-12 must be 2.5.1');
  }
  if (NON_ASCII.test(text) && !(msh.fields[18] ?? '').startsWith('UNICODE')) {
    checker.issue('character-set', 'MSH-18', 'the message holds non-ASCII text but MSH-18 declares no Unicode character set');
  }
  return structure;
}

function checkSetIds(checker: Checker, segments: readonly ParsedSegment[]): void {
  const counters: Record<string, number> = { OBR: 0, NK1: 0, DG1: 0 };
  let observation = 0;
  for (const segment of segments) {
    const setId = segment.fields[1] ?? '';
    const where = `${segment.name}[${segment.position}]-1`;
    if ((segment.name === 'PID' || segment.name === 'PV1') && setId !== '' && setId !== '1') {
      checker.issue('set-id', where, `${segment.name}-1 must be 1`);
    }
    if (segment.name in counters) {
      counters[segment.name] = (counters[segment.name] ?? 0) + 1;
      if (setId !== '' && setId !== String(counters[segment.name])) {
        checker.issue('set-id', where, `${segment.name}-1 is ${setId}, expected ${counters[segment.name]}`);
      }
    }
    if (segment.name === 'OBX') {
      observation += 1;
      if (setId !== String(observation)) {
        checker.issue('set-id', where, `OBX-1 is ${setId}, expected ${observation}`);
      }
    } else if (segment.name !== 'NTE') {
      observation = 0;
    }
  }
}

/** Validates one HL7 v2.5.1 message (segments terminated by CR). */
export function validateHl7Message(text: string): ValidationReport {
  const issues: ValidationIssue[] = [];
  const checker: Checker = { issue: (code, location, message) => issues.push({ code, location, message }) };
  const report = (structure: string | undefined, segmentNames: string[]): ValidationReport => ({
    valid: issues.length === 0,
    structure,
    segmentNames,
    issues,
  });

  if (!text.startsWith('MSH|^~\\&|')) {
    checker.issue('framing', 'MSH', 'a message starts with MSH|^~\\&|');
    return report(undefined, []);
  }
  if (text.includes('\n')) {
    checker.issue('framing', 'message', 'line feed in the message: segments end with CR only and values never contain one');
  }
  if (!text.endsWith('\r')) {
    checker.issue('framing', 'message', 'the last segment is not terminated by CR');
  }
  const lines = text.split('\r');
  if (lines[lines.length - 1] === '') {
    lines.pop();
  }
  const segments: ParsedSegment[] = [];
  lines.forEach((line, index) => {
    if (line === '') {
      checker.issue('framing', `segment ${index + 1}`, 'empty segment');
      return;
    }
    if (CONTROL_CHARACTER.test(line)) {
      checker.issue('framing', `segment ${index + 1}`, 'control character inside a segment');
    }
    const segment = parseSegment(line, index + 1);
    if (!/^[A-Z][A-Z0-9]{2}$/.test(segment.name) || !definitions.segments[segment.name]) {
      checker.issue('unknown-segment', `segment ${index + 1}`, `unknown segment ${JSON.stringify(segment.name)}`);
    }
    segments.push(segment);
  });
  const names = segments.map((segment) => segment.name);
  const msh = segments[0];
  if (!msh || msh.name !== 'MSH') {
    return report(undefined, names);
  }
  const structureId = checkHeader(checker, msh, text);

  const structure = structureId ? messageStructure(structureId) : undefined;
  if (structureId && !structure) {
    checker.issue('message-type', 'MSH-9.3', `no v2.5.1 definition of ${structureId}`);
  }
  if (structure) {
    for (const required of alwaysRequiredSegments(structure)) {
      if (!names.includes(required)) {
        checker.issue('missing-segment', required, `${structureId} requires segment ${required}`);
      }
    }
    const matcher = new StructureMatcher(names);
    if (!matcher.sequence(structure, 0, 0).has(names.length)) {
      const at = matcher.furthest;
      checker.issue(
        'segment-order',
        at < names.length ? `${names[at]}[${at + 1}]` : 'end of message',
        at < names.length
          ? `segment ${names[at]} at position ${at + 1} is not allowed there by ${structureId}`
          : `the message ends before ${structureId} is complete`,
      );
    }
  }
  for (const segment of segments) {
    checkSegmentFields(checker, segment);
  }
  checkSetIds(checker, segments);
  return report(structureId, names);
}
