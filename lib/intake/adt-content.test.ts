/**
 * ADT PV1/DG1/AL1 -> the sending partner's records (issue 27 item 7): the mapping, the replacement
 * rules (visits keyed by visit number, DG1/AL1 lists replaced when present) and the record rules with
 * their locations.
 */
import { parseHl7Message } from '../hl7/parser';
import { adtContentFrom, adtContentProblems, locateAdtContent, MAX_VISITS, withAdtContent } from './adt-content';

const NOW = new Date('2024-12-01T12:00:00Z');

/** A segment with the given fields (by HL7 field number) filled, the others empty. */
function seg(name: string, fields: Record<number, string>): string {
  const last = Math.max(...Object.keys(fields).map(Number));
  return [name, ...Array.from({ length: last }, (_, i) => fields[i + 1] ?? '')].join('|');
}

const MSH = 'MSH|^~\\&|ADT|ACME-ADT|INTEROP|CLINIC|20241107093000||ADT^A04^ADT_A01|MSG1|P|2.5.1';
const PID = 'PID|1||MRN1^^^ACME^MR||Doe^Jane||19700101|F';
const PV1 = seg('PV1', { 1: '1', 2: 'O', 3: 'CLINIC-A^201^1^ACME', 7: '1234^Smith^John^A^^Dr', 19: 'V-100^^^ACME^VN', 44: '202411070930', 45: '20241107' });
const DG1_1 = seg('DG1', { 1: '1', 2: 'I10', 3: 'E11.9^Type 2 diabetes mellitus without complications^I10', 5: '20241107', 6: 'W' });
const DG1_2 = seg('DG1', { 1: '2', 3: 'I10^^I10', 4: 'Essential hypertension', 6: 'F' });
const AL1 = seg('AL1', { 1: '1', 2: 'DA^Drug allergy^HL70127', 3: '7980^Penicillin G^RXNORM', 4: 'SV^Severe^HL70128', 5: 'Hives~Wheezing' });

const contentOf = (segments: string[], timeZone?: string) => adtContentFrom(parseHl7Message([MSH, PID, ...segments].join('\r') + '\r'), timeZone);

describe('PV1/DG1/AL1 -> the partner identity model', () => {
  it('maps every field, times with their precision in the partner zone', () => {
    const content = contentOf([PV1, DG1_1, DG1_2, AL1], 'America/Chicago');
    expect(content).toEqual({
      visit: {
        visitNumber: 'V-100',
        patientClass: 'O',
        location: 'CLINIC-A',
        attending: { id: '1234', name: { family: 'Smith', given: 'John', middle: 'A', prefix: 'Dr' } },
        admitAt: '2024-11-07T09:30-06:00',
        dischargeAt: '2024-11-07',
      },
      diagnoses: [
        { code: { code: 'E11.9', display: 'Type 2 diabetes mellitus without complications', system: 'I10' }, type: 'W', at: '2024-11-07' },
        { code: { code: 'I10', display: 'Essential hypertension', system: 'I10' }, type: 'F' },
      ],
      allergies: [
        {
          allergen: { code: '7980', display: 'Penicillin G', system: 'RXNORM' },
          type: { code: 'DA', display: 'Drug allergy', system: 'HL70127' },
          severity: { code: 'SV', display: 'Severe', system: 'HL70128' },
          reactions: ['Hives', 'Wheezing'],
        },
      ],
    });
    expect(adtContentProblems(content, NOW)).toEqual([]);
  });

  it('no PV1/DG1/AL1, or a PV1 that only says "not applicable": nothing', () => {
    expect(contentOf([])).toEqual({});
    expect(contentOf(['PV1|1|N'])).toEqual({});
    expect(contentOf(['PV1|1|I'])).toEqual({ visit: { patientClass: 'I' } });
  });

  it('version 2.3 IS values (AL1-2, AL1-4) are read as codes', () => {
    expect(contentOf([seg('AL1', { 1: '1', 2: 'FA', 3: '^Peanuts', 4: 'MO' })]).allergies).toEqual([
      { allergen: { code: 'Peanuts', display: 'Peanuts' }, type: { code: 'FA' }, severity: { code: 'MO' } },
    ]);
  });
});

describe('replacement rules', () => {
  const visit = (visitNumber: string | undefined, patientClass: string) => ({ ...(visitNumber ? { visitNumber } : {}), patientClass });
  const diagnosis = { code: { code: 'E11.9' } };
  const allergy = { allergen: { code: 'PEANUT' } };

  it('a visit with a known visit number replaces it; other visits are kept; a new one is added', () => {
    const existing = { visits: [visit('V1', 'I'), visit('V2', 'O')], diagnoses: [diagnosis], allergies: [allergy] };
    expect(withAdtContent(existing, { visit: visit('V1', 'E') })).toEqual({
      visits: [visit('V2', 'O'), visit('V1', 'E')],
      diagnoses: [diagnosis],
      allergies: [allergy],
    });
    expect(withAdtContent(existing, { visit: visit('V3', 'E') }).visits).toEqual([visit('V1', 'I'), visit('V2', 'O'), visit('V3', 'E')]);
    expect(withAdtContent(undefined, { visit: visit('V1', 'I') })).toEqual({ visits: [visit('V1', 'I')] });
  });

  it('a visit without a number replaces the earlier one without a number', () => {
    expect(withAdtContent({ visits: [visit(undefined, 'I'), visit('V1', 'O')] }, { visit: visit(undefined, 'E') }).visits).toEqual([
      visit('V1', 'O'),
      visit(undefined, 'E'),
    ]);
  });

  it('DG1 and AL1 lists replace the earlier ones when present, are kept when absent', () => {
    const existing = { diagnoses: [diagnosis], allergies: [allergy] };
    const other = { code: { code: 'I10' } };
    expect(withAdtContent(existing, { diagnoses: [other] })).toEqual({ diagnoses: [other], allergies: [allergy] });
    expect(withAdtContent(existing, { allergies: [] })).toEqual({ diagnoses: [diagnosis], allergies: [] });
    expect(withAdtContent(existing, {})).toEqual(existing);
  });

  it(`keeps at most ${MAX_VISITS} visits, the oldest dropped`, () => {
    const visits = Array.from({ length: MAX_VISITS }, (_, i) => visit(`V${i}`, 'O'));
    const after = withAdtContent({ visits }, { visit: visit('NEW', 'I') }).visits!;
    expect(after).toHaveLength(MAX_VISITS);
    expect(after[0]).toEqual(visit('V1', 'O'));
    expect(after[MAX_VISITS - 1]).toEqual(visit('NEW', 'I'));
  });
});

describe('record rules, located at the field', () => {
  const located = (segments: string[]) => {
    const problems = adtContentProblems(contentOf(segments), NOW);
    return problems.map((p) => ({ path: p.path, location: locateAdtContent(p.path) }));
  };

  it('a control character in a DG1 text -> DG1-3 of that DG1', () => {
    expect(located([DG1_1, seg('DG1', { 1: '2', 3: 'I10^Essential\u0007hypertension^I10' })])).toEqual([
      { path: 'diagnoses.1.code.display', location: { segmentId: 'DG1', segmentSequence: 2, field: 3 } },
    ]);
  });

  it('a DG1 without a code, an AL1 without an allergen -> required at DG1-3 / AL1-3', () => {
    expect(located([seg('DG1', { 1: '1', 6: 'W' }), seg('AL1', { 1: '1', 2: 'DA' })])).toEqual([
      { path: 'diagnoses.0.code', location: { segmentId: 'DG1', segmentSequence: 1, field: 3 } },
      { path: 'allergies.0.allergen', location: { segmentId: 'AL1', segmentSequence: 1, field: 3 } },
    ]);
  });

  it('times that are no time or lie in the future, an unknown patient class, a too long location, a reaction without text', () => {
    expect(
      located([seg('PV1', { 2: 'X', 3: 'L'.repeat(200), 44: '20241399', 45: '20300101' }), seg('AL1', { 1: '1', 3: 'P^Peanut', 5: 'Hives~---' })]),
    ).toEqual([
      { path: 'visit.patientClass', location: { segmentId: 'PV1', segmentSequence: 1, field: 2 } },
      { path: 'visit.location', location: { segmentId: 'PV1', segmentSequence: 1, field: 3 } },
      { path: 'visit.admitAt', location: { segmentId: 'PV1', segmentSequence: 1, field: 44 } },
      { path: 'visit.dischargeAt', location: { segmentId: 'PV1', segmentSequence: 1, field: 45 } },
      { path: 'allergies.0.reactions.1', location: { segmentId: 'AL1', segmentSequence: 1, field: 5, fieldRepetition: 2 } },
    ]);
  });

  it('a visit number with an HL7 delimiter (escaped) -> PV1-19; an attending without a name is no attending', () => {
    expect(located([seg('PV1', { 2: 'I', 7: '1234', 19: 'V\\T\\1' })])).toEqual([
      { path: 'visit.visitNumber', location: { segmentId: 'PV1', segmentSequence: 1, field: 19 } },
    ]);
  });
});
