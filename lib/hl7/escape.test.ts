import { escapeFormattedText, escapeText, hasLineBreak, isEscapedText } from './escape';

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
