import {
  escapeAsciiTextLines,
  escapeFormattedText,
  escapeText,
  type EscapedText,
  escapeTextLines,
  isEmptyOnceEscaped,
  isEscapedText,
  plainAsciiExtraJsonBytes,
  scanEscapedText,
} from './escape';
import { jsonStringBytes } from './json-string-bytes';
import { Hl7Message, Segment } from './segment';

describe('Segment', () => {
  test('sets fields 1-based and leaves the gaps empty', () => {
    const segment = new Segment('PID')
      .set(1, escapeText('1'))
      .set(3, [escapeText('123'), escapeText(''), escapeText(''), escapeText('AUTH'), escapeText('MR')]);
    expect(segment.toString()).toBe('PID|1||123^^^AUTH^MR');
  });

  test('drops trailing empty fields, components and subcomponents', () => {
    const segment = new Segment('PV1')
      .set(2, [escapeText('N'), escapeText(''), escapeText('')])
      .set(3, [[escapeText('a'), escapeText('')], escapeText('')])
      .set(9, escapeText(''));
    expect(segment.toString()).toBe('PV1||N|a');
  });

  test('components of arrays are subcomponents', () => {
    expect(new Segment('PID').set(11, [[escapeText('street'), escapeText('name')], escapeText('x')]).toString()).toBe('PID|||||||||||street&name^x');
  });

  test('repetitions are joined by ~ and empty ones dropped', () => {
    const segment = new Segment('PID').setRepetitions(13, [[escapeText('555')], [escapeText('')], [escapeText(''), escapeText('NET')]]);
    expect(segment.toString()).toBe('PID|||||||||||||555~^NET');
  });

  test('setting a field again replaces it', () => {
    expect(new Segment('EVN').set(1, escapeText('A08')).set(1, escapeText('T02')).toString()).toBe('EVN|T02');
  });

  test('MSH: fields 1 and 2 are fixed; field 3 is the first one after the encoding characters', () => {
    const msh = new Segment('MSH').set(3, escapeText('APP')).set(9, [escapeText('ADT'), escapeText('A08'), escapeText('ADT_A01')]);
    expect(msh.toString()).toBe('MSH|^~\\&|APP||||||ADT^A08^ADT_A01');
    expect(msh.fieldText(1)).toBe('|');
    expect(msh.fieldText(2)).toBe('^~\\&');
    expect(() => msh.set(2, escapeText('x'))).toThrow();
  });

  test('refuses a value that was not escaped: no value can add a field, component or segment', () => {
    const segment = new Segment('OBX');
    for (const raw of ['a|b', 'a^b', 'a~b', 'a&b', 'a\rb', 'a\nb', 'a\\b']) {
      expect(() => segment.set(5, raw as EscapedText)).toThrow(/not escaped/);
      expect(() => segment.set(5, [escapeText('x'), raw as EscapedText])).toThrow(/not escaped/);
      expect(() => segment.set(5, [[raw as EscapedText]])).toThrow(/not escaped/);
    }
  });

  test('the one check per field refuses a value with any delimiter, line break or stray backslash, wherever it stands', () => {
    const bad = ['a|b', 'a^b', 'a~b', 'a&b', 'a\rb', 'a\nb', 'a\\b', '\\', 'a\\F', '\\X\\', '\\.br', 'a\u0085b', 'a\u2028b', 'a\u0001b', 'a\u007fb'];
    const ok = escapeText('ok');
    for (const raw of bad as EscapedText[]) {
      const segment = new Segment('OBX');
      expect(() => segment.set(5, raw)).toThrow(/not escaped/);
      expect(() => segment.set(5, [ok, raw, ok])).toThrow(/not escaped/);
      expect(() => segment.set(5, [ok, [ok, raw]])).toThrow(/not escaped/);
      expect(() => segment.set(5, [[raw, ok], ok])).toThrow(/not escaped/);
      expect(() => segment.setRepetitions(5, [[ok], [raw], [ok, ok]])).toThrow(/not escaped/);
      expect(() => segment.setLines(5, [ok, raw, ok])).toThrow(/not escaped/);
      // an escape that would span a separator is no escape
      expect(() => segment.set(5, [escapeText(''), raw, escapeText('F\\')])).toThrow(/not escaped/);
    }
  });

  test('a field is accepted exactly when each of its values passes the check of a single value (generated corpus)', () => {
    const pieces = [
      'a',
      ' ',
      '"',
      'é',
      '😀',
      '\ud83d',
      '|',
      '^',
      '&',
      '~',
      '\\',
      '\\F\\',
      '\\E\\',
      '\\.br\\',
      '\\X\\',
      'F',
      '\\',
      '\r',
      '\n',
      '\t',
      '\u0085',
      '\u2029',
      '',
    ];
    let seed = 11;
    const next = (): number => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed >> 8;
    };
    const value = (): EscapedText => {
      let text = '';
      for (let length = next() % 4; length > 0; length -= 1) text += pieces[next() % pieces.length];
      // half of them through escaping, half raw (mostly not escaped text)
      return next() % 2 === 0 ? escapeText(text) : (text as EscapedText);
    };
    let accepted = 0;
    for (let round = 0; round < 3000; round += 1) {
      const components = [value(), [value(), value()], value()] as const;
      const values = [components[0], ...components[1], components[2]];
      const expected = values.every((v) => isEscapedText(v));
      let actual = true;
      try {
        new Segment('OBX').set(5, components).setRepetitions(6, [[values[1]!], [values[3]!]]);
      } catch {
        actual = false;
      }
      expect(actual).toBe(expected);
      if (actual) accepted += 1;
    }
    // both outcomes occur
    expect(accepted).toBeGreaterThan(100);
    expect(accepted).toBeLessThan(2900);
  });

  test('refuses field 0 and bad segment names', () => {
    expect(() => new Segment('PID').set(0, escapeText('x'))).toThrow();
    expect(() => new Segment('pid')).toThrow();
    expect(() => new Segment('PIDX')).toThrow();
  });
});

describe('Hl7Message', () => {
  test('joins segments with CR and ends the last one with CR', () => {
    const message = new Hl7Message(new Segment('MSH').set(3, escapeText('A'))).add(new Segment('EVN').set(1, escapeText('A08')), new Segment('PV1'));
    expect(message.toString()).toBe('MSH|^~\\&|A\rEVN|A08\rPV1\r');
    expect(message.segments.map((segment) => segment.name)).toEqual(['MSH', 'EVN', 'PV1']);
  });

  test('has exactly one MSH, first', () => {
    expect(() => new Hl7Message(new Segment('PID'))).toThrow();
    expect(() => new Hl7Message(new Segment('MSH')).add(new Segment('MSH'))).toThrow();
  });
});

/** A deterministic generator (no Math.random: the same corpus every run). */
function corpus(count: number): string[] {
  const pieces = [
    'a',
    'Z',
    '0',
    ' ',
    '"',
    '\\',
    '|',
    '^',
    '&',
    '~',
    '\r\n',
    '\n',
    '\t',
    '\u0001',
    'é',
    'ß',
    '中',
    '😀',
    '\ud83d',
    '\ude00',
    '\u00a0',
    '\u0085',
    '\u2028',
  ];
  let seed = 7;
  const next = (): number => {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    return seed;
  };
  return Array.from({ length: count }, () => {
    let text = '';
    for (let length = next() % 9; length > 0; length -= 1) text += pieces[next() % pieces.length];
    return text;
  });
}

/** Plain text long enough that the scans skip it with a regular expression (escape.ts REGEX_SCAN_MIN_LENGTH). */
const LONG_PLAIN = 'The quick brown fox jumps over 13 lazy dogs';

/** {@link corpus} values inside and around long runs of plain text. */
function longCorpus(count: number): string[] {
  return corpus(count).map((value, index) => (index % 2 === 0 ? `${LONG_PLAIN}${value}${LONG_PLAIN}` : `${value}${LONG_PLAIN}${value}`));
}

describe('JSON size measured while the values are checked', () => {
  test('a segment and a message count exactly the bytes jsonStringBytes counts on their text', () => {
    const values = [...corpus(600), ...longCorpus(200)];
    // raw surrogates (what escaping replaces) are valid escaped text too: a value ending in a high surrogate is counted on the whole text
    const escaped = [
      ...values.map((value) => escapeText(value)),
      ...values.map((value) => escapeFormattedText(value)),
      '\ud83d' as EscapedText,
      'x\ud83d' as EscapedText,
    ];
    const message = new Hl7Message(new Segment('MSH').set(3, escaped[0]!));
    for (let index = 0; index + 6 < escaped.length; index += 7) {
      const segment = new Segment('OBX')
        .set(1, escaped[index]!)
        .set(3, [escaped[index + 1]!, [escaped[index + 2]!, escaped[index + 3]!]])
        .setRepetitions(5, [[escaped[index + 4]!], [escaped[index + 5]!]])
        .setLines(6, [escaped[index + 6]!, escaped[index]!]);
      expect(segment.jsonStringBytes()).toBe(jsonStringBytes(segment.toString() + '\r') - 2);
      message.add(segment);
    }
    message.add(new Segment('NTE').set(3, '\ud83d' as EscapedText).set(4, escapeText('"x"')));
    expect(message.jsonStringBytes()).toBe(jsonStringBytes(message.toString()));
    // a field set again is measured again
    message.header.set(3, escapeText('"Zoë"'));
    expect(message.jsonStringBytes()).toBe(jsonStringBytes(message.toString()));
  });
});

describe('RAW values escaped by the segment (setText, setTextComponents)', () => {
  const values = [...corpus(800), ...longCorpus(300), LONG_PLAIN];
  // every delimiter, control characters, line breaks, non-ASCII, paired and lone surrogates, alone and mixed
  const singles = [
    '',
    '\\',
    '|',
    '^',
    '&',
    '~',
    '\r',
    '\n',
    '\r\n',
    '\t',
    '\u0000',
    '\u001f',
    '\u007f',
    '\u0085',
    '\u009f',
    '\u2028',
    '\u2029',
    '"',
    'é',
    '😀',
    '\ud83d',
    '\ude00',
    'x\ud83d',
    '\\F\\',
    '\\.br\\',
  ];
  const raws = [...singles, ...values];

  test('plainAsciiExtraJsonBytes: -1 unless escaping leaves the value as it is and it is ASCII; then the measure scanEscapedText gives', () => {
    for (const raw of raws) {
      const extra = plainAsciiExtraJsonBytes(raw);
      const escaped = escapeText(raw);
      if (extra >= 0) {
        expect(escaped).toBe(raw);
        expect(2 * extra).toBe(scanEscapedText(raw));
      } else {
        expect(escaped === raw && /^[\x00-\x7f]*$/.test(raw)).toBe(false);
      }
    }
  });

  test("isEmptyOnceEscaped is escapeText(raw) === '' (generated corpus, control characters alone and mixed)", () => {
    const controls = ['\u0001', '\u0000\u007f', '\u0080\u009f', '\u0085', '\u0001\t', '\u0002\r', '\u001f\u0001x', '\u00a0'];
    for (const raw of [...raws, ...controls, undefined]) {
      expect(isEmptyOnceEscaped(raw)).toBe(escapeText(raw) === '');
      expect(escapeFormattedText(raw) === '').toBe(escapeText(raw) === '');
    }
    expect(() => isEmptyOnceEscaped(42 as unknown as string)).toThrow(TypeError);
  });

  test('setText writes, measures and flags exactly what escapeText-then-set does (generated corpus)', () => {
    for (const raw of [...raws, undefined]) {
      const mine = new Segment('NTE').setText(3, raw);
      const reference = new Segment('NTE').set(3, escapeText(raw));
      expect(mine.toString()).toBe(reference.toString());
      expect(mine.jsonStringBytes()).toBe(reference.jsonStringBytes());
      expect(mine.hasNonAsciiText()).toBe(reference.hasNonAsciiText());
    }
  });

  test('setTextComponents writes, measures and flags exactly what escapeText-then-set does (generated corpus)', () => {
    for (let index = 0; index + 4 < raws.length; index += 5) {
      const components = [raws[index], undefined, raws[index + 1], raws[index + 2], '', raws[index + 3], raws[index + 4]];
      const mine = new Segment('OBX').setTextComponents(16, components);
      const reference = new Segment('OBX').set(
        16,
        components.map((raw) => escapeText(raw)),
      );
      expect(mine.toString()).toBe(reference.toString());
      expect(mine.jsonStringBytes()).toBe(reference.jsonStringBytes());
      expect(mine.jsonStringBytes()).toBe(jsonStringBytes(mine.toString() + '\r') - 2);
      expect(mine.hasNonAsciiText()).toBe(reference.hasNonAsciiText());
    }
  });

  // multi-line text: the corpus values joined by every kind of break, and ASCII text with breaks split by removed controls
  const asciiLines = ['a\r\u0001\nb', '\r\u007f\u0002\n', '\r\r\n\n', '\n\n', '\t\r', '"q"\r\n|^&~\\', '\u0001\u0002', 'x\r\u0001', 'a\u0085b', 'a\u2028b'];
  const texts = [...raws, ...asciiLines];
  for (let index = 0; index + 2 < raws.length; index += 3) {
    texts.push(raws[index]! + '\r\n' + raws[index + 1]! + '\n\r' + raws[index + 2]!);
  }

  test('escapeAsciiTextLines: undefined exactly for text outside ASCII; else escapeTextLines joined, measured as scanEscapedText measures each line', () => {
    let ascii = 0;
    for (const raw of texts) {
      const measure = { extraJsonBytes: -1, hasText: false };
      const text = escapeAsciiTextLines(raw, '~', measure);
      if (/[^\x00-\x7f]/.test(raw)) {
        expect(text).toBeUndefined();
        continue;
      }
      ascii += 1;
      const lines = escapeTextLines(raw);
      expect(text).toBe(lines.join('~'));
      expect(2 * measure.extraJsonBytes).toBe(lines.reduce((sum, line) => sum + scanEscapedText(line), 0));
      expect(measure.hasText).toBe(lines.some((line) => line !== ''));
    }
    expect(ascii).toBeGreaterThan(100);
  });

  test('setTextLines writes, measures and flags exactly what escapeTextLines-then-setLines does (generated corpus)', () => {
    for (const raw of [...texts, undefined]) {
      const mine = new Segment('OBX').setText(1, 'x').setTextLines(5, raw).setText(11, 'F');
      const reference = new Segment('OBX').setText(1, 'x').setLines(5, escapeTextLines(raw)).setText(11, 'F');
      expect(mine.toString()).toBe(reference.toString());
      expect(mine.jsonStringBytes()).toBe(reference.jsonStringBytes());
      expect(mine.jsonStringBytes()).toBe(jsonStringBytes(mine.toString() + '\r') - 2);
      expect(mine.hasNonAsciiText()).toBe(reference.hasNonAsciiText());
    }
    expect(() => new Segment('OBX').setTextLines(5, 42 as unknown as string)).toThrow(TypeError);
    expect(() => new Segment('OBX').setTextLines(0, 'x')).toThrow('OBX-0 cannot be set');
  });

  test('a value that is not a string is refused, as escapeText refuses it', () => {
    expect(() => new Segment('NTE').setText(3, 42 as unknown as string)).toThrow(TypeError);
    expect(() => new Segment('NTE').setTextComponents(3, ['a', null as unknown as string])).toThrow(TypeError);
  });
});

describe('checkedField / setChecked', () => {
  test('writes, measures and flags what set writes; a value that is not escaped is refused when the field is made', () => {
    for (const value of [escapeText('1'), escapeText('Zoë "Z"'), [escapeText('NOTE'), escapeText('Chart"Note'), escapeText('L')]] as const) {
      const field = Segment.checkedField(value);
      const mine = new Segment('OBX').setChecked(3, field);
      const reference = new Segment('OBX').set(3, value);
      expect(mine.toString()).toBe(reference.toString());
      expect(mine.jsonStringBytes()).toBe(reference.jsonStringBytes());
      expect(mine.hasNonAsciiText()).toBe(reference.hasNonAsciiText());
      expect(Object.isFrozen(field)).toBe(true);
    }
    expect(() => Segment.checkedField('a|b' as EscapedText)).toThrow(/not escaped/);
    expect(() => new Segment('MSH').setChecked(2, Segment.checkedField(escapeText('x')))).toThrow();
  });
});

describe('setExtendedCopy', () => {
  test('the source field with one more component: what setting the components again writes, measured and flagged', () => {
    const time = escapeText('20240430172000+0000');
    for (const person of [
      ['ID', 'Zoë "Z"', '', '', '', '', '', '', 'NS', 'L', '', '', 'PRN'],
      ['', 'Doe', '', '', '', '', '', '', '', 'L'],
      ['', ''],
    ]) {
      const mine = new Segment('TXA').setTextComponents(5, person).setExtendedCopy(22, 5, 15, time);
      const padded = person.map((raw) => escapeText(raw));
      while (padded.length < 14) padded.push(escapeText(''));
      const reference = new Segment('TXA').setTextComponents(5, person).set(22, [...padded, [time]]);
      expect(mine.toString()).toBe(reference.toString());
      expect(mine.jsonStringBytes()).toBe(reference.jsonStringBytes());
      expect(mine.hasNonAsciiText()).toBe(reference.hasNonAsciiText());
      // told what setTextComponents wrote, it writes the same without counting the components again
      const written = { text: '', components: -1 };
      const told = new Segment('TXA').setTextComponents(5, person, written).setExtendedCopy(22, 5, 15, time, written);
      expect(written.components).toBe(person.reduce((last, raw, index) => (escapeText(raw) === '' ? last : index + 1), 0));
      expect(told.toString()).toBe(reference.toString());
      expect(told.jsonStringBytes()).toBe(reference.jsonStringBytes());
    }
  });

  test('what setTextComponents wrote is not trusted once the source field holds other text: the components are counted', () => {
    const written = { text: '', components: 0 };
    const segment = new Segment('TXA').setTextComponents(5, ['a', 'b', 'c', 'd', 'e'], written).set(5, [escapeText('a'), escapeText('b')]);
    expect(segment.setExtendedCopy(22, 5, 3, escapeText('x'), written).fieldText(22)).toBe('a^b^x');
    expect(() =>
      new Segment('TXA')
        .setTextComponents(5, ['a', 'b'], written)
        .set(5, [escapeText('a'), escapeText('b'), escapeText('c')])
        .setExtendedCopy(22, 5, 3, escapeText('x'), written),
    ).toThrow(/does not follow/);
  });

  test('refuses a component that does not follow the source, a repeating source, and a value that is not escaped', () => {
    const segment = new Segment('TXA').setTextComponents(5, ['a', 'b', 'c']);
    expect(() => segment.setExtendedCopy(22, 5, 3, escapeText('x'))).toThrow();
    expect(() => segment.setExtendedCopy(22, 5, 4, 'x|y' as EscapedText)).toThrow(/not escaped/);
    const repeating = new Segment('PID').setRepetitions(13, [[escapeText('1')], [escapeText('2')]]);
    expect(() => repeating.setExtendedCopy(14, 13, 5, escapeText('x'))).toThrow();
    expect(segment.setExtendedCopy(22, 5, 4, escapeText('x')).fieldText(22)).toBe('a^b^c^x');
  });
});

describe('copyField', () => {
  test('writes the same text, measure and character set as the field it copies, and replaces what was there', () => {
    const segment = new Segment('TXA')
      .set(5, [escapeText('ID'), escapeText('Zoë "Z"')])
      .set(9, escapeText('old'))
      .copyField(9, 5);
    expect(segment.toString()).toBe('TXA|||||ID^Zoë "Z"||||ID^Zoë "Z"');
    expect(segment.jsonStringBytes()).toBe(jsonStringBytes(segment.toString() + '\r') - 2);
    expect(segment.hasNonAsciiText()).toBe(true);
    segment.set(5, escapeText('x'));
    expect(segment.hasNonAsciiText()).toBe(true); // field 9 still holds ë
    segment.copyField(9, 5);
    expect(segment.hasNonAsciiText()).toBe(false);
    expect(segment.toString()).toBe('TXA|||||x||||x');
    expect(new Segment('TXA').copyField(9, 5).toString()).toBe('TXA');
  });

  test('copyFieldFrom: the field of another segment, with its measure and character set', () => {
    const first = new Segment('OBX').set(16, [escapeText('1'), escapeText('Moreau'), escapeText('Élodie')]);
    const second = new Segment('OBX').set(1, escapeText('2')).copyFieldFrom(first, 16);
    expect(second.toString()).toBe('OBX|2|||||||||||||||1^Moreau^Élodie');
    expect(second.hasNonAsciiText()).toBe(true);
    expect(second.jsonStringBytes()).toBe(jsonStringBytes(second.toString() + '\r') - 2);
    expect(new Segment('OBX').set(3, escapeText('x')).copyFieldFrom(first, 3, 16).fieldText(3)).toBe('1^Moreau^Élodie');
    expect(() => second.copyFieldFrom(new Segment('MSH'), 16, 1)).toThrow();
  });

  test('refuses MSH-1 and MSH-2 as source or target', () => {
    const msh = new Segment('MSH').set(3, escapeText('APP'));
    expect(() => msh.copyField(2, 3)).toThrow();
    expect(() => msh.copyField(3, 1)).toThrow();
  });
});
