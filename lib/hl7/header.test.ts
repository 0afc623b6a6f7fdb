import { Hl7EncodingError } from './errors';
import { escapeText } from './escape';
import { ADT_A08, buildMessageHeader, encodeMessage, type MessageHeaderContext } from './header';
import { Hl7Message, Segment } from './segment';

const context: MessageHeaderContext = {
  sendingApplication: 'CHART',
  sendingFacility: 'CLINIC',
  receivingApplication: 'PARTNER',
  receivingFacility: 'PARTNER_FAC',
  timestamp: new Date('2024-05-06T07:08:09.123Z'),
  controlId: 'MSG00000000000000001',
};

test('MSH-1..MSH-12: encoding characters, HD namespaces, UTC time, MSG with all three components, P, 2.5.1', () => {
  expect(buildMessageHeader(context, ADT_A08).toString()).toBe(
    'MSH|^~\\&|CHART|CLINIC|PARTNER|PARTNER_FAC|20240506070809+0000||ADT^A08^ADT_A01|MSG00000000000000001|P|2.5.1|||NE|NE',
  );
});

test('escapes header values', () => {
  expect(buildMessageHeader({ ...context, sendingApplication: 'A|B' }, ADT_A08).fieldText(3)).toBe('A\\F\\B');
});

test.each(['', ' ', 'x'.repeat(21), 'has|pipe', 'has^caret', 'new\nline', 'ünïcode'])('refuses control id %j', (controlId) => {
  expect(() => buildMessageHeader({ ...context, controlId }, ADT_A08)).toThrow(Hl7EncodingError);
});

describe('MSH-18, decided after the message is built', () => {
  function messageWith(text: string, characterSet?: MessageHeaderContext['characterSet']): string {
    const header = { ...context, characterSet };
    return encodeMessage(new Hl7Message(buildMessageHeader(header, ADT_A08)).add(new Segment('EVN').set(1, escapeText(text))), header);
  }

  test('absent when the whole message is ASCII', () => {
    expect(messageWith('plain').split('\r')[0]).toBe(
      'MSH|^~\\&|CHART|CLINIC|PARTNER|PARTNER_FAC|20240506070809+0000||ADT^A08^ADT_A01|MSG00000000000000001|P|2.5.1|||NE|NE',
    );
  });

  test('UNICODE UTF-8 when any value (even in the last segment) is not ASCII', () => {
    expect(messageWith('Zoë').split('\r')[0]).toBe(
      'MSH|^~\\&|CHART|CLINIC|PARTNER|PARTNER_FAC|20240506070809+0000||ADT^A08^ADT_A01|MSG00000000000000001|P|2.5.1|||NE|NE||UNICODE UTF-8',
    );
  });

  test('always present when the caller asks for it', () => {
    expect(messageWith('plain', 'UNICODE UTF-8').split('\r')[0]).toMatch(/\|UNICODE UTF-8$/);
  });
});

test('MSH-10 is checked as the regular expressions did: 1 to 20 printable ASCII, not all spaces, no delimiter', () => {
  const byRegularExpressions = (id: string): boolean => /^[\x20-\x7E]{1,20}$/.test(id) && !/[|^~\\&]/.test(id) && id.trim() !== '';
  for (let code = 0; code < 0x100; code += 1) {
    for (const controlId of [String.fromCharCode(code), `A${String.fromCharCode(code)}`, ` ${String.fromCharCode(code)} `]) {
      let accepted = true;
      try {
        buildMessageHeader({ ...context, controlId }, ADT_A08);
      } catch {
        accepted = false;
      }
      expect([controlId, accepted]).toEqual([controlId, byRegularExpressions(controlId)]);
    }
  }
  expect(buildMessageHeader({ ...context, controlId: ' 1 ' }, ADT_A08).fieldText(10)).toBe(' 1 ');
  expect(buildMessageHeader({ ...context, controlId: 'x'.repeat(20) }, ADT_A08).fieldText(10)).toBe('x'.repeat(20));
});

test('the message time is written from each Date given (the last one is remembered, never mixed up)', () => {
  const first = buildMessageHeader(context, ADT_A08).fieldText(7);
  const later = buildMessageHeader({ ...context, timestamp: new Date('2024-05-06T07:08:10.000Z') }, ADT_A08).fieldText(7);
  const sameSecond = buildMessageHeader({ ...context, timestamp: new Date('2024-05-06T07:08:10.999Z') }, ADT_A08).fieldText(7);
  expect([first, later, sameSecond]).toEqual(['20240506070809+0000', '20240506070810+0000', '20240506070810+0000']);
  expect(() => buildMessageHeader({ ...context, timestamp: new Date('invalid') }, ADT_A08)).toThrow(Hl7EncodingError);
  expect(buildMessageHeader(context, ADT_A08).fieldText(7)).toBe('20240506070809+0000');
});
