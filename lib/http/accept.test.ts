import { acceptsMediaType } from './accept';

describe('acceptsMediaType', () => {
  it.each([
    [undefined, true],
    ['', true],
    ['*/*', true],
    ['application/*', true],
    ['application/hl7-v2', true],
    ['APPLICATION/HL7-V2', true],
    ['application/json', false],
    ['text/*', false],
    ['application/hl7-v2;q=0', false],
    ['application/hl7-v2;q=0, */*', false],
    ['application/*;q=0, application/hl7-v2', true],
    ['*/*;q=0', false],
    ['text/html, */*;q=0.1', true],
  ])('%s -> %s', (accept, expected) => {
    expect(acceptsMediaType(accept, 'application/hl7-v2')).toBe(expected);
  });
});
