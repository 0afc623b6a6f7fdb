import fc from 'fast-check';
import { escapeFormattedText, escapeText } from './escape';
import { Hl7ParseError } from './parse-error';
import { parseHl7, parseHl7Message, repetitionsOf, valueAt, firstSegment, MAX_BATCH_MESSAGES } from './parser';
import { Hl7Message, Segment } from './segment';

const CR = '\r';

describe('parseHl7Message', () => {
  const sample = ['MSH|^~\\&|LAB|FAC|APP|DEST|20240101120000||ORU^R01|ctl-1|P|2.5.1', 'PID|1||MRN1^^^AUTH^MR~ALT^^^OTHER||Doe^Jane&Middle'].join(CR) + CR;

  it('splits fields, repetitions, components and subcomponents', () => {
    const message = parseHl7Message(sample);
    const msh = message.segments[0]!;
    expect(valueAt(msh, 1)).toBe('|');
    expect(valueAt(msh, 2)).toBe('^~\\&');
    expect(valueAt(msh, 9, 1)).toBe('ORU');
    expect(valueAt(msh, 9, 2)).toBe('R01');
    expect(valueAt(msh, 10)).toBe('ctl-1');
    const pid = firstSegment(message, 'PID');
    expect(valueAt(pid, 3, 1, 1, 2)).toBe('ALT');
    expect(valueAt(pid, 3, 4, 1, 1)).toBe('AUTH');
    expect(valueAt(pid, 5, 2, 2)).toBe('Middle');
    expect(repetitionsOf(pid, 3)).toHaveLength(2);
  });

  it('accepts CRLF and LF segment ends and MLLP framing', () => {
    for (const body of [sample.replace(/\r/g, '\r\n'), sample.replace(/\r/g, '\n'), `\x0b${sample}\x1c\r`]) {
      expect(parseHl7Message(body).segments.map((s) => s.name)).toEqual(['MSH', 'PID']);
    }
  });

  it('reads the delimiters from MSH-1 and MSH-2', () => {
    const custom = ['MSH*:#!@*LAB*FAC*APP*DEST*20240101**ORU:R01*c1*P*2.4', 'PID*1**A:B#C@D*!S!x'].join(CR);
    const message = parseHl7Message(custom);
    const pid = firstSegment(message, 'PID');
    expect(valueAt(pid, 3, 1)).toBe('A');
    expect(valueAt(pid, 3, 2)).toBe('B');
    expect(valueAt(pid, 3, 1, 1, 2)).toBe('C');
    expect(valueAt(pid, 3, 1, 2, 2)).toBe('D');
    expect(valueAt(pid, 4)).toBe(':x');
  });

  it('decodes escapes: delimiters, hex, line breaks, formatting', () => {
    const body = `MSH|^~\\&|A|B|C|D|20240101||ORU^R01|1|P|2.5.1${CR}OBX|1|TX|X||a\\F\\b\\S\\c\\T\\d\\R\\e\\E\\f\\.br\\g\\X41C3A9\\\\H\\h\\N\\\\.sp 2\\i`;
    const obx = firstSegment(parseHl7Message(body), 'OBX');
    expect(valueAt(obx, 5)).toBe('a|b^c&d~e\\f\ngAéh\n\ni');
  });

  it('honours MSH-18 8859/1 and reads UTF-8 by default', () => {
    const latin = Buffer.concat([
      Buffer.from(`MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5||||||8859/1${CR}PID|1||M||M`, 'latin1'),
      Buffer.from([0xfc]),
      Buffer.from('ller\\XE9\\'),
    ]);
    expect(valueAt(firstSegment(parseHl7Message(latin), 'PID'), 5)).toBe('Mülleré');
    const utf8 = Buffer.from(`MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5.1||||||UNICODE UTF-8${CR}PID|1||M||Müller`, 'utf8');
    expect(valueAt(firstSegment(parseHl7Message(utf8), 'PID'), 5)).toBe('Müller');
    const invalid = Buffer.concat([Buffer.from(`MSH|^~\\&|A|B|C|D|20240101||ADT^A08|1|P|2.5.1${CR}PID|1||M||M`), Buffer.from([0xfc])]);
    expect(() => parseHl7Message(invalid)).toThrow(Hl7ParseError);
  });

  it.each([
    ['no MSH', 'PID|1||X', '100'],
    ['empty', '\r\n', '101'],
    ['bad delimiters', 'MSH|^^\\&|A', '102'],
    ['short encoding characters', 'MSH|^~|A|B', '102'],
    ['unterminated escape', `MSH|^~\\&|A|B|C|D|1||ORU^R01|1|P|2.5.1${CR}OBX|1|ST|X||abc\\F`, '102'],
    ['unknown escape', `MSH|^~\\&|A|B|C|D|1||ORU^R01|1|P|2.5.1${CR}OBX|1|ST|X||a\\Q\\b`, '102'],
    ['odd hex', `MSH|^~\\&|A|B|C|D|1||ORU^R01|1|P|2.5.1${CR}OBX|1|ST|X||\\X4\\`, '102'],
    ['bad segment id', `MSH|^~\\&|A|B|C|D|1||ORU^R01|1|P|2.5.1${CR}ob|1`, '100'],
  ])('refuses %s with a typed error', (_name, body, code) => {
    try {
      parseHl7(body);
      throw new Error('parsed');
    } catch (error) {
      expect(error).toBeInstanceOf(Hl7ParseError);
      expect((error as Hl7ParseError).code).toBe(code);
    }
  });

  it('locates a bad escape (segment, sequence, field, component)', () => {
    const body = `MSH|^~\\&|A|B|C|D|1||ORU^R01|1|P|2.5.1${CR}OBX|1|ST|X||ok${CR}OBX|2|ST|X||x^y\\Q\\`;
    expect(() => parseHl7(body)).toThrow(
      expect.objectContaining({ location: { segmentId: 'OBX', segmentSequence: 2, field: 5, fieldRepetition: 1, component: 2, subcomponent: 1 } }),
    );
  });
});

describe('batches', () => {
  const message = (id: string) => `MSH|^~\\&|A|B|C|D|20240101||ADT^A08|${id}|P|2.5.1${CR}PID|1||M${id}${CR}`;

  it('parses FHS/BHS batches message by message; one bad message does not spoil the rest', () => {
    const body = `FHS|^~\\&|A${CR}BHS|^~\\&|A|B|C|D|20240101||||batch-7${CR}${message('1')}MSH|^~\\&|A|B|C|D|1||ORU^R01|2|P|2.5.1${CR}OBX|1|ST|X||\\Q\\${CR}${message('3')}BTS|3${CR}FTS|1`;
    const parsed = parseHl7(body);
    if (parsed.kind !== 'batch') throw new Error('not a batch');
    expect(valueAt(parsed.batch.batchHeader, 11)).toBe('batch-7');
    expect(parsed.batch.messages.map((m) => m.ok)).toEqual([true, false, true]);
    const bad = parsed.batch.messages[1]!;
    if (bad.ok) throw new Error('unexpected');
    expect(valueAt(bad.header, 10)).toBe('2');
  });

  it(`refuses more than ${MAX_BATCH_MESSAGES} messages`, () => {
    const body = `BHS|^~\\&|A${CR}` + Array.from({ length: MAX_BATCH_MESSAGES + 1 }, (_, i) => message(String(i))).join('') + `BTS|${MAX_BATCH_MESSAGES + 1}`;
    expect(() => parseHl7(body)).toThrow(Hl7ParseError);
  });
});

describe('properties', () => {
  // any text the encoder can carry unchanged: everything but control characters and lone surrogates
  const value = fc.string({ unit: fc.constantFrom('a', 'Z', '0', ' ', '|', '^', '~', '\\', '&', '#', 'é', 'ß', '中', '😀', '.', 'X', 'b', 'r') });
  const textWithBreaks = fc.array(value, { maxLength: 4 }).map((lines) => lines.join('\n'));

  it('anything the encoder writes parses back to the same values', () => {
    fc.assert(
      fc.property(
        fc.array(fc.array(fc.array(value, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 }),
        textWithBreaks,
        (fields, note) => {
          const msh = new Segment('MSH')
            .set(3, escapeText('APP'))
            .set(9, [escapeText('ORU'), escapeText('R01')])
            .set(10, escapeText('c1'))
            .set(12, escapeText('2.5.1'));
          const zzz = new Segment('ZZZ');
          fields.forEach((components, index) =>
            zzz.set(
              index + 1,
              components.map((subs) => subs.map((sub) => escapeText(sub))),
            ),
          );
          const obx = new Segment('OBX').set(2, escapeText('TX')).set(5, escapeFormattedText(note));
          const encoded = new Hl7Message(msh).add(zzz, obx).toString();
          const parsed = parseHl7Message(Buffer.from(encoded, 'utf8'));
          const zzzParsed = firstSegment(parsed, 'ZZZ');
          fields.forEach((components, f) =>
            components.forEach((subs, c) =>
              subs.forEach((sub, s) => {
                // the encoder drops trailing empty items, so an absent one reads as ''
                expect(valueAt(zzzParsed, f + 1, c + 1, s + 1)).toBe(sub);
              }),
            ),
          );
          expect(valueAt(firstSegment(parsed, 'OBX'), 5)).toBe(note);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('arbitrary bytes never throw anything but Hl7ParseError', () => {
    const prefix = fc.constantFrom('', 'MSH|^~\\&|', 'MSH|^~\\&|A|B|C|D|1||ORU^R01|1|P|2.5.1\r', 'BHS|^~\\&|\rMSH|^~\\&|', 'MSH*:#!@*');
    fc.assert(
      fc.property(prefix, fc.uint8Array({ maxLength: 300 }), (head, bytes) => {
        try {
          parseHl7(Buffer.concat([Buffer.from(head, 'latin1'), Buffer.from(bytes)]));
        } catch (error) {
          expect(error).toBeInstanceOf(Hl7ParseError);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('arbitrary HL7-ish text never throws anything but Hl7ParseError', () => {
    const token = fc.constantFrom(
      'MSH|^~\\&|',
      'PID|',
      'OBX|',
      '\\',
      '\\X',
      '\\.br\\',
      '|',
      '^',
      '~',
      '&',
      '\r',
      '\n',
      'A',
      '\\E\\',
      'BHS|^~\\&|',
      'BTS|',
      'é',
      '\\X00\\',
      '\\XFF\\',
    );
    fc.assert(
      fc.property(fc.array(token, { maxLength: 60 }), (tokens) => {
        try {
          parseHl7(tokens.join(''));
        } catch (error) {
          expect(error).toBeInstanceOf(Hl7ParseError);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
