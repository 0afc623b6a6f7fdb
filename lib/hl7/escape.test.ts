import fc from 'fast-check';
import { escapeFormattedText, escapeText, escapeTextLines, hasLineBreak, isEscapedText } from './escape';

describe('escapeText', () => {
  test.each([
    ['plain', 'plain'],
    ['a|b', 'a\\F\\b'],
    ['a^b', 'a\\S\\b'],
    ['a&b', 'a\\T\\b'],
    ['a~b', 'a\\R\\b'],
    ['a\\b', 'a\\E\\b'],
    // `\` is escaped first: the escapes written for the other delimiters are not escaped again
    ['\\F\\', '\\E\\F\\E\\'],
    ['|^&~\\', '\\F\\\\S\\\\T\\\\R\\\\E\\'],
    ['\\.br\\', '\\E\\.br\\E\\'],
  ])('%j -> %j', (input, expected) => {
    expect(escapeText(input)).toBe(expected);
  });

  test('a line break becomes one space (CRLF counts as one break)', () => {
    expect(escapeText('a\r\nb')).toBe('a b');
    expect(escapeText('a\rb')).toBe('a b');
    expect(escapeText('a\nb')).toBe('a b');
    expect(escapeText('a\n\nb')).toBe('a  b');
  });

  test('TAB becomes a space, other C0 controls and DEL are removed', () => {
    expect(escapeText('a\tb')).toBe('a b');
    expect(escapeText('a\u0000b\u0007c\u001bd\u001fe\u007ff')).toBe('abcdef');
  });

  test('NEL, U+2028 and U+2029 are line breaks (one space each); other C1 controls are removed', () => {
    expect(escapeText('a\u0085b\u2028c\u2029d')).toBe('a b c d');
    expect(escapeText('a\u0080b\u009fc\u009bd')).toBe('abcd');
    // U+00A0 (no-break space) is the first character after the C1 block: kept
    expect(escapeText('a\u00a0b')).toBe('a\u00a0b');
  });

  test('non-ASCII text is kept as it is', () => {
    expect(escapeText('Zoë 😀 e\u0301 中文 ß')).toBe('Zoë 😀 e\u0301 中文 ß');
  });

  test('an unpaired surrogate becomes U+FFFD', () => {
    expect(escapeText('a\uD800b')).toBe('a\uFFFDb');
    expect(escapeText('a\uDC00')).toBe('a\uFFFD');
  });

  test('undefined and empty give the empty value', () => {
    expect(escapeText(undefined)).toBe('');
    expect(escapeText('')).toBe('');
  });
});

describe('escapeFormattedText', () => {
  test('line breaks become \\.br\\', () => {
    expect(escapeFormattedText('one\r\ntwo\nthree\rfour')).toBe('one\\.br\\two\\.br\\three\\.br\\four');
    expect(escapeFormattedText('\n')).toBe('\\.br\\');
  });

  test('NEL, U+2028 and U+2029 become \\.br\\ like CR and LF', () => {
    expect(escapeFormattedText('one\u0085two\u2028three\u2029four')).toBe('one\\.br\\two\\.br\\three\\.br\\four');
  });

  test('delimiters are escaped as in escapeText, and the \\.br\\ we write is not escaped', () => {
    expect(escapeFormattedText('a|b\n\\c')).toBe('a\\F\\b\\.br\\\\E\\c');
  });
});

describe('isEscapedText', () => {
  test.each(['', 'abc', 'a\\F\\b', 'x\\.br\\y', 'é😀'])('accepts %j', (value) => {
    expect(isEscapedText(value)).toBe(true);
  });

  test.each(['a|b', 'a^b', 'a~b', 'a&b', 'a\rb', 'a\nb', 'a\\b', 'a\\X0D\\b', '\u0001', 'a\u0085b', 'a\u2028b', 'a\u2029b', 'a\u0090b'])(
    'rejects %j',
    (value) => {
      expect(isEscapedText(value)).toBe(false);
    },
  );

  test('everything escapeText and escapeFormattedText produce is accepted', () => {
    const nasty = 'a|b^c&d~e\\f\r\ng\th\u0000i😀\\F\\';
    expect(isEscapedText(escapeText(nasty))).toBe(true);
    expect(isEscapedText(escapeFormattedText(nasty))).toBe(true);
  });
});

test('hasLineBreak', () => {
  expect(hasLineBreak('a\nb')).toBe(true);
  expect(hasLineBreak('a\rb')).toBe(true);
  expect(hasLineBreak('a\u0085b')).toBe(true);
  expect(hasLineBreak('a\u2028b')).toBe(true);
  expect(hasLineBreak('a\u2029b')).toBe(true);
  expect(hasLineBreak('a b')).toBe(false);
});

describe('escapeTextLines (escaped line by line, in one pass)', () => {
  /** The lines of an escapeFormattedText result: read escape by escape, `\.br\` ends a line (unambiguous left to right). */
  function linesOfFormatted(formatted: string): string[] {
    const lines: string[] = [];
    let line = '';
    for (let index = 0; index < formatted.length; index += 1) {
      if (formatted.startsWith('\\.br\\', index)) {
        lines.push(line);
        line = '';
        index += 4;
      } else if (formatted[index] === '\\') {
        line += formatted.slice(index, index + 3); // \E\ \F\ \S\ \T\ \R\
        index += 2;
      } else {
        line += formatted[index];
      }
    }
    lines.push(line);
    return lines;
  }

  test('examples: each break ends a line, empty lines kept, delimiters escaped', () => {
    expect(escapeTextLines('one\r\ntwo\n\nthree|four\rfive\u2028six')).toEqual(['one', 'two', '', 'three\\F\\four', 'five', 'six']);
    expect(escapeTextLines('plain')).toEqual(['plain']);
    expect(escapeTextLines('')).toEqual(['']);
    expect(escapeTextLines(undefined)).toEqual(['']);
    expect(escapeTextLines('\n')).toEqual(['', '']);
    expect(escapeTextLines('a\r\u0001\nb')).toEqual(['a', 'b']); // CR, a removed control, LF: one break
    expect(() => escapeTextLines(5 as unknown as string)).toThrow(TypeError);
  });

  test('the same lines as escapeFormattedText separates (generated corpus with delimiters, controls, breaks, non-ASCII)', () => {
    const pieces = [
      'a',
      'Zoë',
      '😀',
      '\ud83d',
      '\ude00',
      ' ',
      '|',
      '^',
      '&',
      '~',
      '\\',
      '\\.br\\',
      '\\E\\',
      '\r',
      '\n',
      '\r\n',
      '\t',
      '\u0001',
      '\u007f',
      '\u0085',
      '\u0090',
      '\u2028',
      '\u2029',
      '"',
    ];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...pieces), { maxLength: 12 }), (parts) => {
        const text = parts.join('');
        const lines = escapeTextLines(text);
        expect(lines).toEqual(linesOfFormatted(escapeFormattedText(text)));
        for (const line of lines) expect(isEscapedText(line)).toBe(true);
      }),
      { numRuns: 2000 },
    );
  });
});
