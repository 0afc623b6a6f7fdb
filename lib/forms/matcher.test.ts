import fc from 'fast-check';
import {
  MATCH_MARGIN,
  MATCH_THRESHOLD,
  MATCH_WEIGHTS,
  compareFirstNames,
  compareLastNames,
  contradicts,
  decideMatch,
  demographicsAgree,
  isAdjacentTransposition,
  isOneEditApart,
  matchSubject,
  rankCandidates,
  scoreCandidate,
  type ChartCandidate,
  type MatchSubject,
  type ScoredCandidate,
} from './matcher';
import { areNicknames, NICKNAME_GROUPS } from './nicknames';
import { nameTokens, normaliseName, phoneticCodes } from './normalize';

const robin3: ChartCandidate = { patientId: 'demo-patient-3', given: 'Robin', family: 'Example', birthDate: '1975-06-30', mrn: 'DEMO-000003' };
const robin4: ChartCandidate = { patientId: 'demo-patient-4', given: 'Robin', family: 'Example', birthDate: '1975-06-30', mrn: 'DEMO-000004' };
const alex: ChartCandidate = {
  patientId: 'demo-patient-1',
  given: 'Alex',
  family: 'Sample',
  birthDate: '1980-04-12',
  email: 'alex.sample@example.com',
  mrn: 'DEMO-000001',
};
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

describe('agreement levels', () => {
  it.each([
    ['Alex', 'alex', 'exact'],
    ['ALEX', 'Alex', 'exact'],
    ['Alex Quinn', 'Alex', 'exact'],
    ['Bob', 'Robert', 'nickname'],
    ['Bill', 'William', 'nickname'],
    ['Jonh', 'John', 'edit1'],
    ['Robni', 'Robin', 'edit1'],
    ['Jonathon', 'Jonathan', 'edit1'],
    ['Ana', 'Ada', 'disagree'], // one edit, but too short to trust
    ['Filip', 'Philip', 'phonetic'],
    ['A', 'Alex', 'initial'],
    ['Morgan', 'Alex', 'disagree'],
    ['', 'Alex', 'missing'],
  ])('first name %s vs %s -> %s', (a, b, level) => expect(compareFirstNames(a, b)).toBe(level));

  it.each([
    ['Sample', 'SAMPLE', 'exact'],
    ['Ødegård', 'Odegard', 'exact'],
    ['Smith', 'Smith-Jones', 'token'],
    ['Samlpe', 'Sample', 'edit1'],
    ['Sampel', 'Sample', 'edit1'],
    ['Smyth', 'Smithe', 'phonetic'],
    ['Example', 'Sample', 'disagree'],
  ])('last name %s vs %s -> %s', (a, b, level) => expect(compareLastNames(a, b)).toBe(level));

  it('phonetic codes come from Double Metaphone on folded letters', () => {
    expect(phoneticCodes('Smith')).toEqual(phoneticCodes('Smyth'));
    expect(phoneticCodes('Zoë')).toEqual(phoneticCodes('zoe'));
    expect(phoneticCodes('')).toEqual([]);
  });

  it('weights are log2(m/u): agreement positive, disagreement negative, exact above its variants', () => {
    expect(MATCH_WEIGHTS.firstName.exact).toBeGreaterThan(MATCH_WEIGHTS.firstName.nickname);
    expect(MATCH_WEIGHTS.firstName.nickname).toBeGreaterThan(0);
    expect(MATCH_WEIGHTS.firstName.disagree).toBeLessThan(0);
    expect(MATCH_WEIGHTS.lastName.exact).toBeGreaterThan(MATCH_WEIGHTS.lastName.edit1);
    expect(MATCH_WEIGHTS.lastName.disagree).toBeLessThan(0);
    expect(MATCH_WEIGHTS.email.disagree).toBeLessThan(0);
  });
});

describe('scoreCandidate', () => {
  it('is not a candidate without the same date of birth', () => {
    expect(scoreCandidate(subject({ dob: '1980-04-13' }), alex)).toBeUndefined();
    expect(scoreCandidate(subject({ dob: undefined }), alex)).toBeUndefined();
  });

  it('records every term as a reason and sums them', () => {
    const s = scoreCandidate(subject({}), alex)!;
    expect(s.reasons).toEqual(['dob_exact:+14.6', 'first_name_exact:+7.8', 'last_name_exact:+8.8']);
    expect(s.score).toBeCloseTo(31.2, 5);
    expect(s.corroborated).toBe(false);
  });

  it('an equal email corroborates, a different one subtracts', () => {
    expect(scoreCandidate(subject({ email: 'ALEX.sample@example.com' }), alex)).toMatchObject({ corroborated: true });
    const other = scoreCandidate(subject({ email: 'x@example.com' }), alex)!;
    expect(other.reasons).toContain('email_mismatch:-2.7');
    expect(other.score).toBeLessThan(scoreCandidate(subject({}), alex)!.score);
  });

  it('an external id equal to the MRN corroborates', () => {
    expect(scoreCandidate(subject({ externalPatientId: 'demo-000001' }), alex)!.reasons).toContain('external_id_mrn:+16.5');
  });

  it('takes swapped first and last names with a small penalty', () => {
    const s = scoreCandidate(subject({ firstName: 'Sample', lastName: 'Alex' }), alex)!;
    expect(s.reasons).toContain('names_swapped:-2.0');
    expect(s.score).toBeGreaterThanOrEqual(MATCH_THRESHOLD);
  });
});

const scored = (patientId: string, score: number, block = `b-${patientId}`, corroborated = false): ScoredCandidate => ({
  patientId,
  score,
  reasons: [],
  block,
  corroborated,
});

describe('decision', () => {
  it.each([
    ['exact name', {}],
    ['nickname', { firstName: 'Alexander' }],
    ['first-name typo', { firstName: 'Aelx' }],
    ['last-name typo', { lastName: 'Sampel' }],
    ['last name sounds alike', { lastName: 'Sampul' }],
    ['swapped names', { firstName: 'Sample', lastName: 'Alex' }],
    ['different email', { email: 'new@example.com' }],
  ])('routes a single candidate: %s', (_label, over) => {
    expect(matchSubject(subject(over), [alex])).toMatchObject({ outcome: 'matched', patientId: 'demo-patient-1' });
  });

  it('holds a different first name with the same last name and birth date (below threshold)', () => {
    expect(matchSubject(subject({ firstName: 'Morgan' }), [alex])).toMatchObject({ outcome: 'review', reason: 'below_threshold' });
  });

  it('holds namesakes (same name and birth date) as ambiguous, both recorded', () => {
    const d = matchSubject({ firstName: 'Robin', lastName: 'Example', dob: '1975-06-30' }, [robin4, robin3]);
    expect(d).toMatchObject({ outcome: 'review', reason: 'ambiguous' });
    expect(d.candidates.map((c) => c.patientId)).toEqual(['demo-patient-3', 'demo-patient-4']);
  });

  it('an MRN separates namesakes', () => {
    expect(matchSubject({ firstName: 'Robin', lastName: 'Example', dob: '1975-06-30', externalPatientId: 'DEMO-000004' }, [robin3, robin4])).toMatchObject({
      outcome: 'matched',
      patientId: 'demo-patient-4',
    });
  });

  it('never routes a twin on the name alone, routes it with an equal email', () => {
    const sam: ChartCandidate = { patientId: 't1', given: 'Sam', family: 'Twin', birthDate: '2001-01-01', email: 'sam@example.com' };
    const kim: ChartCandidate = { patientId: 't2', given: 'Kim', family: 'Twin', birthDate: '2001-01-01', email: 'kim@example.com' };
    expect(matchSubject({ firstName: 'Sam', lastName: 'Twin', dob: '2001-01-01' }, [sam, kim])).toMatchObject({ outcome: 'review', reason: 'ambiguous' });
    expect(matchSubject({ firstName: 'Sam', lastName: 'Twin', dob: '2001-01-01', email: 'sam@example.com' }, [sam, kim])).toMatchObject({
      outcome: 'matched',
      patientId: 't1',
    });
  });

  it('requires the margin over the runner-up', () => {
    expect(decideMatch([scored('a', 30), scored('b', 30 - MATCH_MARGIN + 0.1)])).toMatchObject({ outcome: 'review', reason: 'ambiguous' });
    expect(decideMatch([scored('a', 30), scored('b', 30 - MATCH_MARGIN)])).toMatchObject({ outcome: 'matched', patientId: 'a' });
  });

  it('no candidates, below threshold', () => {
    expect(decideMatch([])).toMatchObject({ outcome: 'review', reason: 'no_candidates' });
    expect(decideMatch([scored('a', MATCH_THRESHOLD - 0.1)])).toMatchObject({ outcome: 'review', reason: 'below_threshold' });
  });

  it('is deterministic whatever the input order (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.record({ id: fc.constantFrom('a', 'b', 'c', 'd'), score: fc.integer({ min: 0, max: 40 }) }), { maxLength: 8 }), (rows) => {
        const list = rows.map((r) => scored(r.id, r.score));
        expect(decideMatch(list)).toEqual(decideMatch([...list].reverse()));
        expect(rankCandidates(list)).toEqual(rankCandidates([...list].reverse()));
      }),
    );
  });

  it('routes only when the best clears the threshold and the margin (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 40 }), { maxLength: 6 }), (scores) => {
        const list = scores.map((score, i) => scored(`p${i}`, score));
        const d = decideMatch(list);
        const sorted = [...scores].sort((x, y) => y - x);
        const ok = sorted.length > 0 && sorted[0]! >= MATCH_THRESHOLD && (sorted.length === 1 || sorted[0]! - sorted[1]! >= MATCH_MARGIN);
        expect(d.outcome === 'matched').toBe(ok);
      }),
    );
  });
});

describe('contradicts (named patient / remembered link)', () => {
  it.each([
    [{}, false],
    [{ firstName: 'Alexander' }, false],
    [{ lastName: 'Sampel' }, false],
    [{ firstName: 'Sample', lastName: 'Alex' }, false],
    [{ dob: '1980-04-13' }, true],
    [{ lastName: 'Y', firstName: 'X' }, true],
  ])('%j -> %s', (over, expected) => expect(contradicts(subject(over as Partial<MatchSubject>), alex)).toBe(expected));
});

describe('demographicsAgree (a packet naming patientId is routed directly only then)', () => {
  const zoe: ChartCandidate = { patientId: 'demo-patient-2', given: 'Zoë', family: 'Ødegård', birthDate: '1992-11-03' };
  const zoeSubject = (over: Partial<MatchSubject>): MatchSubject => ({ firstName: 'Zoë', lastName: 'Ødegård', dob: '1992-11-03', ...over });
  it.each([
    [{}, true],
    [{ firstName: 'zoe', lastName: 'ODEGARD' }, true], // normalised as the matcher does
    [{ firstName: ' Zo-e ', lastName: "O'degard" }, true],
    [{ firstName: 'Mallory' }, false], // the right surname and birth date, another first name
    [{ lastName: 'Odegaard' }, false], // a near variant is for the matcher and staff, not a direct route
    [{ firstName: 'Ødegård', lastName: 'Zoë' }, false], // swapped
    [{ dob: '1992-11-04' }, false],
    [{ dob: undefined }, false], // no birth date: cannot agree
  ])('%j -> %s', (over, expected) => expect(demographicsAgree(zoeSubject(over as Partial<MatchSubject>), zoe)).toBe(expected));

  it('a chart patient without a birth date or given name never agrees', () => {
    expect(demographicsAgree(zoeSubject({}), { ...zoe, birthDate: undefined })).toBe(false);
    expect(demographicsAgree(zoeSubject({}), { ...zoe, given: undefined })).toBe(false);
    expect(demographicsAgree(subject({}), alex)).toBe(true);
    expect(demographicsAgree(subject({ firstName: 'Alexander' }), alex)).toBe(false);
  });
});
