import { decodeCursor, encodeCursor, InvalidCursorError } from './inbox';
import { isPacketId, packetIdFor } from './packet-id';
import { parseMatchingMessage, matchingMessageBody } from './matching-queue';

const id = packetIdFor('demo-forms', 'demo-form-tool', 'sub-1');
const key = { pk: `PACKET#${id}`, sk: 'PACKET', statePk: 'STATE#pending_review', stateSk: `2024-01-01T00:00:00.000Z#${id}` };

describe('packet ids', () => {
  it('are deterministic, shaped and separate their inputs', () => {
    expect(packetIdFor('demo-forms', 'demo-form-tool', 'sub-1')).toBe(id);
    expect(packetIdFor('other-partner', 'demo-form-tool', 'sub-1')).not.toBe(id);
    expect(isPacketId(id)).toBe(true);
    expect(packetIdFor('p', 'a|b', 'c')).not.toBe(packetIdFor('p', 'a', 'b|c'));
    expect(packetIdFor('p', 'a', 'sub-1')).not.toBe(packetIdFor('p', 'b', 'sub-1'));
  });
});

describe('matching messages', () => {
  it('carry the packet id only', () => {
    expect(JSON.parse(matchingMessageBody(id))).toEqual({ v: 1, packetId: id });
    expect(parseMatchingMessage(matchingMessageBody(id))).toBe(id);
  });
  it.each(['', 'x', '{"v":2,"packetId":"fp_00000000000000000000000000000000"}', '{"v":1,"packetId":"PACKET#x"}', '[]', 'null'])('rejects %s', (body) => {
    expect(parseMatchingMessage(body)).toBeUndefined();
  });
});

describe('inbox cursors', () => {
  it('round-trip', () => {
    expect(decodeCursor('pending_review', encodeCursor('pending_review', key))).toEqual(key);
  });
  it('belong to one list', () => {
    expect(() => decodeCursor('pending_match', encodeCursor('pending_review', key))).toThrow(InvalidCursorError);
  });
  it.each([
    ['garbage', 'not base64url!'],
    ['empty', ''],
    ['json but not a cursor', Buffer.from('{"v":1}').toString('base64url')],
    ['another partition', encodeCursor('pending_review', { ...key, statePk: 'PATIENT#demo-patient-1' })],
    ['another item type', encodeCursor('pending_review', { ...key, pk: 'LINK#abc', sk: 'LINK' })],
    ['extra keys', Buffer.from(JSON.stringify({ v: 1, s: 'pending_review', k: { ...key, extra: 'x' } })).toString('base64url')],
    ['too long', 'a'.repeat(5000)],
  ])('refuses %s', (_label, cursor) => {
    expect(() => decodeCursor('pending_review', cursor)).toThrow(InvalidCursorError);
  });
});
