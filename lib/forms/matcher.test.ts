import fc from 'fast-check';
import {
  MATCH_THRESHOLD,
  compareFirstNames,
  decideMatch,
  isAdjacentTransposition,
  isOneEditApart,
  matchSubject,
  rankCandidates,
  scoreCandidate,
  type ChartCandidate,
  type MatchSubject,
} from './matcher';
import { areNicknames, NICKNAME_GROUPS } from './nicknames';
import { nameTokens, normaliseName } from './normalize';

const robin3: ChartCandidate = { patientId: 'demo-patient-3', given: 'Robin', family: 'Example', birthDate: '1975-06-30', mrn: 'DEMO-000003' };
const robin4: ChartCandidate = { patientId: 'demo-patient-4', given: 'Robin', family: 'Example', birthDate: '1975-06-30', mrn: 'DEMO-000004' };
const alex: ChartCandidate = { patientId: 'demo-patient-1', given: 'Alex', family: 'Sample', birthDate: '1980-04-12', email: 'alex.sample@example.com', mrn: 'DEMO-000001' };
const subject = (over: Partial<MatchSubject>): MatchSubject => ({ firstName: 'Alex', lastName: 'Sample', dob: '1980-04-12', ...over });

describe('normalisation', () => {
  it.each([
    ["O'Brien", 'obrien'],
    ['  SMITH-jones ', 'smithjones'],
    ['Zoë', 'zoe'],
    ['Ødegård', 'odegard'],
    ['Łukasz', 'lukasz'],
    ['Strauß', 'strauss'],
    ['', ''],
  ])('%s -> %s', (input, expected) => expect(normaliseName(input)).toBe(expected));

  it('splits tokens on spaces, hyphens and dots', () => {
    expect(nameTokens('Mary-Ann  J.')).toEqual(['mary', 'ann', 'j']);
  });
});

describe('nickname table', () => {
  it.each([
    ['bob', 'robert'],
    ['robert', 'bobby'],
    ['bill', 'william'],
    ['liz', 'elizabeth'],
    ['peggy', 'margaret'],
    ['alex', 'alexander'],
    ['alex', 'alexandra'],
    ['sandy', 'alexandra'],
  ])('%s ~ %s', (a, b) => {
    expect(areNicknames(a, b)).toBe(true);
    expect(areNicknames(b, a)).toBe(true);
  });

  it.each([
    ['bob', 'william'],
    ['robin', 'robert'],
    ['alex', 'alex'],
    ['unknownname', 'robert'],
    // both variants of alex, but never in one group: no transitive equivalence
    ['alexander', 'alexandra'],
  ])('%s !~ %s', (a, b) => expect(areNicknames(a, b)).toBe(false));

  it('holds only normalised names', () => {
    for (const group of NICKNAME_GROUPS) for (const name of group) expect(normaliseName(name)).toBe(name);
  });
});

describe('string distance helpers', () => {
  it.each([
    ['john', 'jonh', true],
    ['robin', 'robni', true],
    ['robin', 'orbin', true],
    ['robin', 'robin', false],
    ['robin', 'nibor', false],
    ['ab', 'ba', true],
    ['abc', 'acbd', false],
  ])('transposition %s / %s -> %s', (a, b, expected) => expect(isAdjacentTransposition(a, b)).toBe(expected));

  it.each([
    ['jonathan', 'johnathan', true],
    ['michael', 'micheal', false],
    ['steven', 'stephen', false],
    ['sara', 'sarah', true],
    ['katherine', 'catherine', true],
    ['abc', 'abc', false],
  ])('one edit %s / %s -> %s', (a, b, expected) => expect(isOneEditApart(a, b)).toBe(expected));

  it('transposition and one edit are symmetric (property)', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 8 }), fc.string({ maxLength: 8 }), (a, b) => {
        expect(isAdjacentTransposition(a, b)).toBe(isAdjacentTransposition(b, a));
        expect(isOneEditApart(a, b)).toBe(isOneEditApart(b, a));
      }),
    );
  });

  it('every adjacent swap of a word with distinct neighbours is a transposition (property)', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 2, maxLength: 10 }), fc.nat(), (word, n) => {
        const i = n % (word.length - 1);
        fc.pre(word[i] !== word[i + 1]);
        const swapped = word.slice(0, i) + word[i + 1] + word[i] + word.slice(i + 2);
        expect(isAdjacentTransposition(word, swapped)).toBe(true);
      }),
    );
  });
});

describe('first name rules', () => {
  it.each([
    ['Alex', 'alex', 'first_name_exact', 50],
    ['ALEX', 'Alex', 'first_name_exact', 50],
    ['Alex Quinn', 'Alex', 'first_name_exact', 50],
    ['Bob', 'Robert', 'first_name_nickname', 40],
    ['Bill', 'William', 'first_name_nickname', 40],
    ['Jonh', 'John', 'first_name_transposition', 40],
    ['Robni', 'Robin', 'first_name_transposition', 40],
    ['Jonathon', 'Jonathan', 'first_name_typo', 25],
    ['Ana', 'Ada', 'first_name_mismatch', 0], // one edit, but too short to trust
    ['A', 'Alex', 'first_name_initial', 15],
    ['Morgan', 'Alex', 'first_name_mismatch', 0],
    ['', 'Alex', 'first_name_missing', 0],
  ])('%s vs %s -> %s (%i)', (a, b, rule, points) => expect(compareFirstNames(a, b)).toEqual({ rule, points }));
});

describe('scoreCandidate', () => {
  it('is not a candidate without the same last name and date of birth', () => {
    expect(scoreCandidate(subject({ dob: '1980-04-13' }), alex)).toBeUndefined();
    expect(scoreCandidate(subject({ lastName: 'Simple' }), alex)).toBeUndefined();
    expect(scoreCandidate(subject({ dob: undefined }), alex)).toBeUndefined();
  });

  it('exact name + dob scores the threshold exactly', () => {
    const s = scoreCandidate(subject({}), alex)!;
    expect(s.score).toBe(50);
    expect(s.score).toBeGreaterThanOrEqual(MATCH_THRESHOLD);
    expect(s.reasons).toEqual(['last_name_dob', 'first_name_exact:+50']);
  });

  it('adds an equal email, subtracts a different one', () => {
    expect(scoreCandidate(subject({ email: ' Alex.Sample@Example.com ' }), alex)!.score).toBe(80);
    const other = scoreCandidate(subject({ email: 'someone@else.example' }), alex)!;
    expect(other.score).toBe(20);
    expect(other.reasons).toContain('email_mismatch:-30');
  });

  it('adds an external id equal to the MRN', () => {
    const s = scoreCandidate(subject({ firstName: 'Alexander', externalPatientId: 'demo-000001' }), alex)!;
    expect(s.reasons).toEqual(['last_name_dob', 'first_name_nickname:+40', 'external_id_mrn:+40']);
    expect(s.score).toBe(80);
  });

  it('accepts swapped first and last names with a matching first name', () => {
    const s = scoreCandidate(subject({ firstName: 'Sample', lastName: 'Alex' }), alex)!;
    expect(s.reasons).toEqual(['swapped_name_dob', 'names_swapped:+40']);
    expect(scoreCandidate(subject({ firstName: 'Sample', lastName: 'Morgan' }), alex)).toBeUndefined();
  });

  it('folds accents and punctuation in last names', () => {
    const zoe: ChartCandidate = { patientId: 'demo-patient-2', given: 'Zoë', family: 'Ødegård', birthDate: '1992-11-03' };
    expect(scoreCandidate({ firstName: 'Zoe', lastName: 'Odegard', dob: '1992-11-03' }, zoe)!.score).toBe(50);
  });
});

describe('decision', () => {
  it('routes exactly one candidate at the threshold', () => {
    const d = matchSubject(subject({}), [alex, robin3]);
    expect(d).toMatchObject({ outcome: 'matched', patientId: 'demo-patient-1' });
  });

  it('holds two patients with the same name and birth date as ambiguous, both recorded', () => {
    const d = matchSubject({ firstName: 'Robin', lastName: 'Example', dob: '1975-06-30' }, [robin4, robin3]);
    expect(d.outcome).toBe('review');
    if (d.outcome !== 'review') return;
    expect(d.reason).toBe('ambiguous');
    expect(d.candidates.map((c) => [c.patientId, c.score])).toEqual([
      ['demo-patient-3', 50],
      ['demo-patient-4', 50],
    ]);
  });

  it('an MRN separates the two', () => {
    const d = matchSubject({ firstName: 'Robin', lastName: 'Example', dob: '1975-06-30', externalPatientId: 'DEMO-000004' }, [robin3, robin4]);
    // 90 and 50: both reach the threshold, so still ambiguous by the "exactly one" rule
    expect(d).toMatchObject({ outcome: 'review', reason: 'ambiguous' });
  });

  it('a nickname alone is below the threshold, a nickname plus email is not', () => {
    expect(matchSubject(subject({ firstName: 'Sandy' }), [alex])).toMatchObject({ outcome: 'review', reason: 'below_threshold' });
    expect(matchSubject(subject({ firstName: 'Alexander', email: 'alex.sample@example.com' }), [alex])).toMatchObject({ outcome: 'matched', patientId: 'demo-patient-1' });
  });

  it('a transposition plus email matches, alone it does not', () => {
    expect(matchSubject(subject({ firstName: 'Aelx' }), [alex])).toMatchObject({ outcome: 'review', reason: 'below_threshold' });
    expect(matchSubject(subject({ firstName: 'Aelx', email: 'alex.sample@example.com' }), [alex])).toMatchObject({ outcome: 'matched' });
  });

  it('an exact name with a different email waits for review', () => {
    expect(matchSubject(subject({ email: 'other@example.com' }), [alex])).toMatchObject({ outcome: 'review', reason: 'below_threshold' });
  });

  it('no candidates', () => {
    expect(matchSubject(subject({ lastName: 'Nobody' }), [alex, robin3])).toEqual({ outcome: 'review', reason: 'no_candidates', candidates: [] });
  });

  it('respects a custom threshold', () => {
    expect(decideMatch([{ patientId: 'p', score: 40, reasons: [] }], 40)).toMatchObject({ outcome: 'matched', patientId: 'p' });
    expect(decideMatch([{ patientId: 'p', score: 40, reasons: [] }], 41)).toMatchObject({ outcome: 'review', reason: 'below_threshold' });
  });

  it('is deterministic whatever the input order (property)', () => {
    const candidate = fc.record({ patientId: fc.constantFrom('a', 'b', 'c', 'd'), score: fc.integer({ min: -30, max: 120 }), reasons: fc.constant([] as string[]) });
    fc.assert(
      fc.property(fc.array(candidate, { maxLength: 8 }), (list) => {
        const reversed = [...list].reverse();
        expect(decideMatch(reversed)).toEqual(decideMatch(list));
        expect(rankCandidates(reversed)).toEqual(rankCandidates(list));
      }),
    );
  });

  it('routes only when exactly one candidate reaches the threshold (property)', () => {
    const candidate = fc.record({ patientId: fc.uuid(), score: fc.integer({ min: -30, max: 120 }), reasons: fc.constant([] as string[]) });
    fc.assert(
      fc.property(fc.uniqueArray(candidate, { selector: (c) => c.patientId, maxLength: 6 }), (list) => {
        const d = decideMatch(list);
        const over = list.filter((c) => c.score >= MATCH_THRESHOLD);
        expect(d.outcome === 'matched').toBe(over.length === 1);
        if (d.outcome === 'matched') expect(d.patientId).toBe(over[0]!.patientId);
      }),
    );
  });
});
