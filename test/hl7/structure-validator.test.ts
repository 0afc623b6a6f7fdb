import { FIXTURE_NAMES, loadFixture } from './fixtures';
import { type IssueCode, messageStructure, type StructureNode, tableValues, validateHl7Message } from './structure-validator';

// --- Helpers working on message text only (independent of the encoder) -------------------------------------

function segmentsOf(message: string): string[] {
  return message.split('\r').filter((segment) => segment !== '');
}

function join(segments: string[]): string {
  return segments.map((segment) => `${segment}\r`).join('');
}

/** Replaces field `fieldNumber` (1-based, MSH-aware) of the `occurrence`-th segment named `name`. */
function withField(message: string, name: string, fieldNumber: number, value: string, occurrence = 0): string {
  let seen = -1;
  return join(
    segmentsOf(message).map((segment) => {
      if (!segment.startsWith(`${name}|`) || ++seen !== occurrence) {
        return segment;
      }
      const parts = segment.split('|');
      const index = name === 'MSH' ? fieldNumber - 1 : fieldNumber;
      while (parts.length <= index) parts.push('');
      parts[index] = value;
      return parts.join('|');
    }),
  );
}

function fieldOf(message: string, name: string, fieldNumber: number, occurrence = 0): string {
  const segment = segmentsOf(message).filter((candidate) => candidate.startsWith(`${name}|`))[occurrence] ?? '';
  return segment.split('|')[name === 'MSH' ? fieldNumber - 1 : fieldNumber] ?? '';
}

function withoutSegment(message: string, name: string): string {
  return join(segmentsOf(message).filter((segment) => !segment.startsWith(`${name}|`)));
}

function moveSegment(message: string, name: string, beforeName: string): string {
  const segments = segmentsOf(message);
  const moved = segments.find((segment) => segment.startsWith(`${name}|`));
  if (!moved) throw new Error(`no ${name}`);
  const rest = segments.filter((segment) => segment !== moved);
  const at = rest.findIndex((segment) => segment.startsWith(`${beforeName}|`));
  rest.splice(at, 0, moved);
  return join(rest);
}

function issueCodes(message: string): IssueCode[] {
  return validateHl7Message(message).issues.map((issue) => issue.code);
}

const note = loadFixture('mdm-t02-note');
const adt = loadFixture('adt-a08-patient');
const encounter = loadFixture('oru-r01-encounter');
const assessment = loadFixture('oru-r01-assessment');

// --- Accepts valid messages ---------------------------------------------------------------------------------

describe('accepts valid messages', () => {
  test.each(FIXTURE_NAMES.filter((name) => name !== 'batch-summary'))('%s', (name) => {
    const report = validateHl7Message(loadFixture(name));
    expect(report.issues).toEqual([]);
    expect(report.valid).toBe(true);
  });

  test('a hand-written minimal ADT^A08 (not produced by the encoder)', () => {
    const message = 'MSH|^~\\&|A|B|C|D|20240101000000||ADT^A08^ADT_A01|1|P|2.5.1\rEVN|A08|20240101000000\rPID|1||X^^^Y^MR||Doe\rPV1|1|N\r';
    expect(validateHl7Message(message).issues).toEqual([]);
  });

  test('reports the message structure', () => {
    expect(validateHl7Message(note).structure).toBe('MDM_T02');
    expect(validateHl7Message(adt).structure).toBe('ADT_A01');
    expect(validateHl7Message(encounter).structure).toBe('ORU_R01');
  });
});

// --- Rejects broken messages --------------------------------------------------------------------------------

describe('rejects a missing required segment', () => {
  test.each([
    ['PID from MDM_T02', note, 'PID'],
    ['PID from ADT_A01', adt, 'PID'],
    ['EVN from ADT_A01', adt, 'EVN'],
    ['PV1 from ADT_A01', adt, 'PV1'],
    ['TXA from MDM_T02', note, 'TXA'],
    ['OBX from MDM_T02', note, 'OBX'],
    ['OBR from ORU_R01', assessment, 'OBR'],
  ])('%s', (_label, message, segment) => {
    const report = validateHl7Message(withoutSegment(message, segment));
    expect(report.valid).toBe(false);
    expect(report.issues).toEqual(expect.arrayContaining([expect.objectContaining({ code: 'missing-segment', location: segment })]));
  });

  test('PID missing from ORU_R01 with PV1 left in place: PV1 is then out of place', () => {
    expect(issueCodes(withoutSegment(encounter, 'PID'))).toContain('segment-order');
  });
});

describe('rejects segments in the wrong order', () => {
  test.each([
    ['TXA before PV1 in MDM_T02', moveSegment(note, 'TXA', 'PV1')],
    ['OBX before TXA in MDM_T02', moveSegment(note, 'OBX', 'TXA')],
    ['PV1 before NK1 in ADT_A01', moveSegment(adt, 'PV1', 'NK1')],
    ['EVN after PID in ADT_A01', moveSegment(adt, 'PID', 'EVN')],
    ['PD1 before PID in ADT_A01', moveSegment(adt, 'PD1', 'PID')],
    ['OBX before its OBR in ORU_R01', moveSegment(assessment, 'OBX', 'OBR')],
    ['PV1 before PID in ORU_R01', moveSegment(encounter, 'PV1', 'PID')],
  ])('%s', (_label, message) => {
    expect(issueCodes(message)).toContain('segment-order');
  });

  test('a second PV1 where the structure allows one', () => {
    const segments = segmentsOf(adt);
    segments.push('PV1|1|N');
    expect(issueCodes(join(segments))).toContain('segment-order');
  });

  test('a second TXA in MDM_T02', () => {
    const segments = segmentsOf(note);
    segments.splice(5, 0, segments[4] as string);
    expect(issueCodes(join(segments))).toContain('segment-order');
  });

  test('a Z segment or unknown segment', () => {
    expect(issueCodes(note.replace('TXA|', 'ZZZ|x\rTXA|'))).toEqual(expect.arrayContaining(['unknown-segment', 'segment-order']));
  });
});

describe('rejects values outside their HL7 tables', () => {
  test.each([
    ['PID-8 sex (0001)', adt, 'PID', 8, 'X'],
    ['PV1-2 patient class (0004)', note, 'PV1', 2, 'Z'],
    ['TXA-17 completion status (0271)', note, 'TXA', 17, 'XX'],
    ['TXA-19 availability status (0273)', note, 'TXA', 19, 'ZZ'],
    ['TXA-3 content presentation (0191)', note, 'TXA', 3, 'HTML'],
    ['OBX-11 result status (0085)', note, 'OBX', 11, 'Q'],
    ['OBX-2 value type CWE (not in v2.5.1 table 0125)', assessment, 'OBX', 2, 'CWE'],
    ['MSH-11 processing id (0103)', note, 'MSH', 11, 'Q'],
    ['EVN-1 event type (0003)', adt, 'EVN', 1, 'Z99'],
    ['ORC-1 order control (0119)', encounter, 'ORC', 1, 'QQ'],
    ['OBR-25 result status (0123)', assessment, 'OBR', 25, 'Q'],
    ['CE coding system (0396)', adt, 'NK1', 3, 'SPO^Spouse^NOT_A_SYSTEM'],
    ['XTN use code (0201)', adt, 'PID', 13, '555^HOME^PH'],
    ['CX identifier type (0203)', adt, 'PID', 3, 'X^^^Y^NOPE'],
  ])('%s', (_label, message, segment, field, value) => {
    expect(issueCodes(withField(message, segment, field, value))).toContain('table-value');
  });

  test.each([
    ['structure not in 0354', 'ADT^A08^ADT_A99'],
    ['event not of that structure (0354)', 'ADT^A28^ADT_A01'],
    ['message code not of that structure', 'ORU^A08^ADT_A01'],
    ['only two components', 'ADT^A08'],
  ])('MSH-9: %s', (_label, value) => {
    expect(issueCodes(withField(adt, 'MSH', 9, value))).toContain('message-type');
  });

  test('MSH-12 other than 2.5.1', () => {
    expect(issueCodes(withField(adt, 'MSH', 12, '2.3'))).toContain('message-type');
  });
});

describe('rejects bad escape sequences', () => {
  test.each([
    ['unknown escape', 'PID', 5, 'Do\\Q\\e^Jane'],
    ['unterminated escape', 'PID', 5, 'Doe\\^Jane'],
    ['lone backslash', 'PID', 3, 'A\\B^^^X^MR'],
    ['odd hex escape', 'PID', 5, 'Do\\X0\\e'],
    ['formatting escape outside formatted text (ST)', 'PID', 5, 'Doe\\.br\\Smith'],
  ])('%s', (_label, segment, field, value) => {
    expect(issueCodes(withField(note, segment, field, value))).toContain('escape');
  });

  test('\\.br\\ is accepted in TX by the structure rules (the receiver rules refuse it: receiver-rules.test.ts)', () => {
    const message = withField(note, 'OBX', 5, 'line one\\.br\\line two');
    expect(issueCodes(message)).toEqual([]);
  });

  test('\\.br\\ is rejected in an ST observation value', () => {
    const message = withField(withField(assessment, 'OBX', 5, 'a\\.br\\b', 3), 'OBX', 2, 'ST', 3);
    expect(issueCodes(message)).toContain('escape');
  });
});

describe('rejects other broken messages', () => {
  test.each([
    ['PID-3 empty', note, 'PID', 3, '', 'required-field'],
    ['PID-5 empty', adt, 'PID', 5, '', 'required-field'],
    ['PV1-2 empty', adt, 'PV1', 2, '', 'required-field'],
    ['TXA-12 empty', note, 'TXA', 12, '', 'required-field'],
    ['OBX-11 empty', note, 'OBX', 11, '', 'required-field'],
    ['OBR-4 empty', assessment, 'OBR', 4, '', 'required-field'],
    ['MSH-10 empty', note, 'MSH', 10, '', 'required-field'],
    ['PID-7 not yyyyMMdd', note, 'PID', 7, '1984-07-19', 'data-type'],
    ['MSH-7 not a time stamp', note, 'MSH', 7, 'yesterday', 'data-type'],
    ['NM observation value not numeric', assessment, 'OBX', 5, 'one', 'data-type'],
    ['PID-8 repeated', adt, 'PID', 8, 'F~M', 'repetition'],
    ['components in a primitive field (PID-8)', adt, 'PID', 8, 'F^X', 'too-many-components'],
    ['subcomponents in a primitive component (CX-1)', adt, 'PID', 3, 'a&b^^^X^MR', 'too-many-components'],
    ['too many components in CX', adt, 'PID', 3, 'a^b^c^d^MR^f^g^h^i^j^k^l', 'too-many-components'],
    ['OBX-1 out of sequence', assessment, 'OBX', 1, '5', 'set-id'],
    ['OBR-1 out of sequence', encounter, 'OBR', 1, '7', 'set-id'],
    ['MSH-10 longer than 20', note, 'MSH', 10, 'x'.repeat(21), 'data-type'],
  ])('%s', (_label, message, segment, field, value, code) => {
    expect(issueCodes(withField(message, segment, field, value))).toContain(code as IssueCode);
  });

  test('a field beyond the segment definition', () => {
    expect(issueCodes(note.replace('EVN|T02|20240506140809', 'EVN|T02|20240506140809||||||extra'))).toContain('too-many-fields');
  });

  test('LF instead of CR between segments', () => {
    expect(issueCodes(note.replace(/\r/g, '\n'))).toContain('framing');
  });

  test('CRLF between segments', () => {
    expect(issueCodes(note.replace(/\r/g, '\r\n'))).toContain('framing');
  });

  test('last segment not terminated', () => {
    expect(issueCodes(note.slice(0, -1))).toContain('framing');
  });

  test('an empty segment', () => {
    expect(issueCodes(note.replace('\rPID|', '\r\rPID|'))).toContain('framing');
  });

  test('MSH-2 other than ^~\\&', () => {
    expect(validateHl7Message(note.replace('MSH|^~\\&|', 'MSH|^~\\#|')).valid).toBe(false);
  });

  test('non-ASCII text without MSH-18', () => {
    expect(fieldOf(assessment, 'MSH', 18)).toBe('UNICODE UTF-8');
    expect(issueCodes(withField(assessment, 'MSH', 18, ''))).toContain('character-set');
  });
});

// --- The dictionary agrees with hl7-notes.md ----------------------------------------------------------------

type NotationNode = { name?: string; min: number; max: number; children?: NotationNode[] };

/** Parses hl7-notes.md's notation (`[]` optional, `{}` repeating) into a tree. */
function parseNotation(text: string): NotationNode[] {
  const tokens = text.match(/\[|\]|\{|\}|[A-Z][A-Z0-9]{2}/g) ?? [];
  let position = 0;
  const wrap = (sequence: NotationNode[], min: number, max: number): NotationNode =>
    sequence.length === 1
      ? { ...(sequence[0] as NotationNode), min: (sequence[0] as NotationNode).min * min, max: (sequence[0] as NotationNode).max * max }
      : { min, max, children: sequence };
  const sequence = (closer?: string): NotationNode[] => {
    const nodes: NotationNode[] = [];
    while (position < tokens.length) {
      const token = tokens[position++] as string;
      if (token === closer) return nodes;
      if (token === '[') nodes.push(wrap(sequence(']'), 0, 1));
      else if (token === '{') nodes.push(wrap(sequence('}'), 1, Number.POSITIVE_INFINITY));
      else nodes.push({ name: token, min: 1, max: 1 });
    }
    return nodes;
  };
  return sequence();
}

/** The dictionary's structure in the same shape: group names dropped, single-child groups folded. */
function fromDictionary(nodes: StructureNode[]): NotationNode[] {
  return nodes.map((node): NotationNode => {
    if (node.kind === 'segment') return { name: node.name, min: node.min, max: node.max };
    if (node.kind === 'choice') throw new Error('no choice expected');
    const children = fromDictionary(node.children);
    const only = children[0] as NotationNode;
    return children.length === 1 ? { ...only, min: only.min * node.min, max: only.max * node.max } : { min: node.min, max: node.max, children };
  });
}

function show(nodes: NotationNode[]): string {
  return nodes
    .map((node) => {
      const cardinality = `${node.min}..${node.max === Number.POSITIVE_INFINITY ? '*' : node.max}`;
      return node.children ? `(${show(node.children)})${cardinality}` : `${node.name}${cardinality}`;
    })
    .join(' ');
}

const HL7_NOTES_STRUCTURES: Record<string, string> = {
  ADT_A01:
    'MSH [{SFT}] EVN PID [PD1] [{ROL}] [{NK1}] PV1 [PV2] [{ROL}] [{DB1}] [{OBX}] [{AL1}] [{DG1}] [DRG] [{PR1 [{ROL}]}] [{GT1}] [{IN1 [IN2] [{IN3}] [{ROL}]}] [ACC] [UB1] [UB2] [PDA]',
  ADT_A05:
    'MSH [{SFT}] EVN PID [PD1] [{ROL}] [{NK1}] PV1 [PV2] [{ROL}] [{DB1}] [{OBX}] [{AL1}] [{DG1}] [DRG] [{PR1 [{ROL}]}] [{GT1}] [{IN1 [IN2] [{IN3}] [{ROL}]}] [ACC] [UB1] [UB2]',
  MDM_T02: 'MSH [{SFT}] EVN PID PV1 [{ORC [{TQ1 [{TQ2}]}] OBR [{NTE}]}] TXA {OBX [{NTE}]}',
  ORU_R01:
    'MSH [{SFT}] { [PID [PD1] [{NTE}] [{NK1}] [PV1 [PV2]]] { [ORC] OBR [{NTE}] [{TQ1 [{TQ2}]}] [CTD] [{OBX [{NTE}]}] [{FT1}] [{CTI}] [{SPM [{OBX}]}] } } [DSC]',
};

describe('the hl7-dictionary data agrees with hl7-notes.md', () => {
  test.each(Object.entries(HL7_NOTES_STRUCTURES))('abstract message structure %s', (structure, notation) => {
    const fromData = messageStructure(structure);
    expect(fromData).toBeDefined();
    expect(show(fromDictionary(fromData as StructureNode[]))).toBe(show(parseNotation(notation)));
  });

  test.each([
    [1, 'A F M N O U'],
    [4, 'B C E I N O P R U'],
    [271, 'AU DI DO IN IP LA PA'],
    [273, 'AV CA OB UN'],
    [85, 'C D F I N O P R S U W X'],
    [125, 'AD CE CF CK CN CP CX DT ED FT MO NM PN RP SN ST TM TN TS TX XAD XCN XON XPN XTN'],
  ])('table %i', (table, values) => {
    expect(tableValues(table).sort()).toEqual(values.split(' ').sort());
  });

  test('table 0191 includes TEXT', () => {
    expect(tableValues(191)).toContain('TEXT');
  });

  test.each([
    ['ADT', 'A01', 'ADT_A01'],
    ['ADT', 'A04', 'ADT_A01'],
    ['ADT', 'A08', 'ADT_A01'],
    ['ADT', 'A13', 'ADT_A01'],
    ['ADT', 'A28', 'ADT_A05'],
    ['ADT', 'A31', 'ADT_A05'],
    ['MDM', 'T02', 'MDM_T02'],
    ['ORU', 'R01', 'ORU_R01'],
    ['ORM', 'O01', 'ORM_O01'],
  ])('table 0354: %s^%s uses %s', (code, event, structure) => {
    const message = withField(adt, 'MSH', 9, `${code}^${event}^${structure}`);
    expect(validateHl7Message(message).issues.filter((issue) => issue.code === 'message-type')).toEqual([]);
  });
});
