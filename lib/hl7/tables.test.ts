import { orderStatusCode, PATIENT_CLASS_TEXT } from './tables';

describe('orderStatusCode (table 0038)', () => {
  test.each([
    ['completed', 'CM'],
    ['Completed', 'CM'],
    ['cancelled', 'CA'],
    ['canceled', 'CA'],
    ['in progress', 'IP'],
    ['in_progress', 'IP'],
    ['on-hold', 'HD'],
    ['scheduled', 'SC'],
    ['discontinued', 'DC'],
    ['CM', 'CM'],
    [' SC ', 'SC'],
  ])('%j -> %s', (status, code) => {
    expect(orderStatusCode(status)).toBe(code);
  });

  test.each([undefined, '', 'pending review', 'cm?', 'toString', 'constructor', '__proto__'])('%j has no table 0038 code', (status) => {
    expect(orderStatusCode(status)).toBeUndefined();
  });
});

test('table 0004 patient classes', () => {
  expect(Object.keys(PATIENT_CLASS_TEXT).sort()).toEqual(['B', 'C', 'E', 'I', 'N', 'O', 'P', 'R', 'U']);
});
