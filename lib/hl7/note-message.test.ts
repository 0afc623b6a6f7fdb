import * as fx from '../../test/hl7/chart-fixtures';
import { encodeNoteMessage } from './note-message';

/** Field `n` of the first segment named `name`. */
function field(message: string, name: string, n: number): string {
  const segment = message.split('\r').find((s) => s.startsWith(`${name}|`))!;
  return segment.split('|')[n] ?? '';
}

describe('note message: the XCN written once and copied', () => {
  const input = { header: fx.header, patient: fx.patient, note: fx.note, encounter: fx.encounter };

  test('PV1-7 is the attending, TXA-5/9 the author, TXA-22 the author and the creation time, when they differ', () => {
    const attending = { id: 'NPI1112223334', name: { family: 'Other', given: 'Ann' } };
    const message = encodeNoteMessage({ ...input, encounter: { ...fx.encounter, attending } });
    expect(field(message, 'PV1', 7)).toBe(`NPI1112223334^Other^Ann^^^^^^RIVERSIDE_CLINIC^L^^^PRN`);
    const author = field(message, 'TXA', 5);
    expect(author.startsWith('NPI9876543210^Haddad^Omar')).toBe(true);
    expect(field(message, 'TXA', 9)).toBe(author);
    expect(field(message, 'TXA', 22)).toBe(`${author}^^${field(message, 'TXA', 4)}`);
  });

  test('an attending equal to the author (another object) gives the same message as the author itself', () => {
    const copy = { ...fx.note.author, name: { ...fx.note.author.name } };
    expect(encodeNoteMessage({ ...input, encounter: { ...fx.encounter, attending: copy } })).toBe(encodeNoteMessage(input));
    expect(field(encodeNoteMessage(input), 'PV1', 7)).toBe(field(encodeNoteMessage(input), 'TXA', 5));
  });
});
