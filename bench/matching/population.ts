/**
 * A seeded synthetic population for the matcher's evaluation (`npm run eval:matching`, and the
 * small fixed-seed version in npm test): made-up people, no real person.
 *
 * Population: `size` chart patients with twins (same last name, birth date and address, different
 * first names), exact namesakes (same first name, last name and birth date), common-name clusters
 * (a few very common first + last names over many birth dates), non-ASCII and hyphenated names.
 *
 * Packets with known truth, one per (kind, sampled patient):
 *   exact            the chart's name, birth date and email
 *   nickname         a nickname of the first name (nickname table), no email
 *   first_typo       one letter changed, inserted, deleted or two swapped in the first name, no email
 *   last_typo        the same in the last name, no email
 *   swapped          first and last name written in each other's place, no email
 *   case             upper/lower case changed, no email
 *   accent           accents dropped (non-ASCII names) or added, no email
 *   missing_email    the chart's name and birth date, no email
 *   different_email  the chart's name and birth date, another email
 *   namesake         a patient who has an exact namesake in the chart: name and birth date only
 *   twin             a patient who has a twin in the chart: name and birth date only
 *   not_in_chart     a made-up person who is not in the chart
 * A packet is IDENTIFIABLE when its patient is in the chart and no other chart patient shares the
 * patient's last name and birth date, or the packet carries the patient's email (the matcher must
 * never route twins and namesakes on the name alone).
 */
import type { Patient } from '../../lib/chart/types';
import { NICKNAME_GROUPS } from '../../lib/forms/nicknames';
import { normaliseName } from '../../lib/forms/normalize';

/** mulberry32: small, fast, good enough for test data; the same seed gives the same population. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FIRST = [
  'Alexander',
  'Alexandra',
  'Andrew',
  'Anthony',
  'Barbara',
  'Benjamin',
  'Catherine',
  'Charles',
  'Charlotte',
  'Christopher',
  'Daniel',
  'David',
  'Deborah',
  'Dorothy',
  'Edward',
  'Elizabeth',
  'Emily',
  'Frederick',
  'Gabriel',
  'Harriet',
  'Isabella',
  'Jacob',
  'James',
  'Jennifer',
  'Jessica',
  'Jonathan',
  'Joseph',
  'Katherine',
  'Kenneth',
  'Laura',
  'Margaret',
  'Matthew',
  'Michael',
  'Nicholas',
  'Olivia',
  'Patricia',
  'Patrick',
  'Rebecca',
  'Richard',
  'Robert',
  'Samantha',
  'Samuel',
  'Sarah',
  'Stephanie',
  'Susan',
  'Thomas',
  'Timothy',
  'Victoria',
  'William',
  'Zachary',
  'Amara',
  'Bartholomew',
  'Cressida',
  'Desmond',
  'Evangeline',
  'Fitzgerald',
  'Gwendolyn',
  'Horatio',
  'Imogen',
  'Jasper',
  'Zoë',
  'José',
  'Łukasz',
  'Søren',
  'Chloé',
  'Renée',
  'Björn',
  'François',
  'Anaïs',
  'Jürgen',
  'Siobhán',
  'Dagný',
  'Ángel',
  'Oğuz',
  'Mårten',
  'Noémie',
  'Ines',
  'Mateo',
  'Priya',
  'Tomasz',
  'Yuki',
  'Kwame',
  'Aisling',
  'Leilani',
  'Rafael',
  'Valentina',
  'Hamish',
  'Ingrid',
  'Kofi',
  'Lucía',
];

const LAST = [
  'Smith',
  'Johnson',
  'Williams',
  'Brown',
  'Jones',
  'Garcia',
  'Miller',
  'Davis',
  'Rodriguez',
  'Martinez',
  'Hernandez',
  'Lopez',
  'Gonzalez',
  'Wilson',
  'Anderson',
  'Thomas',
  'Taylor',
  'Moore',
  'Jackson',
  'Martin',
  'Thompson',
  'White',
  'Harris',
  'Sanchez',
  'Clark',
  'Ramirez',
  'Lewis',
  'Robinson',
  'Walker',
  'Young',
  'Allen',
  'King',
  'Wright',
  'Scott',
  'Torres',
  'Nguyen',
  'Hill',
  'Flores',
  'Green',
  'Adams',
  'Nelson',
  'Baker',
  'Hall',
  'Rivera',
  'Campbell',
  'Mitchell',
  'Carter',
  'Roberts',
  'Okonkwo',
  'Kowalczyk',
  'Ødegård',
  'Müller',
  'Gómez',
  "O'Brien",
  'Nguyễn',
  'Fernández',
  'Schröder',
  'Łęcki',
  'Ståhlberg',
  'Ó Súilleabháin',
  'Dąbrowski',
  'Jovanović',
  'Çelik',
  'Papadopoulos',
  'Van der Berg',
  'MacLeod',
  'Abernathy',
  'Blackwood',
  'Castellanos',
  'Delacroix',
  'Eriksson',
  'Fairweather',
  'Gallagher',
  'Hawthorne',
  'Ishikawa',
  'Jablonski',
  'Kavanagh',
  'Lindqvist',
  'Montgomery',
  'Nakamura',
  'Oyelaran',
  'Pemberton',
  'Quintero',
  'Rasmussen',
  'Sutherland',
  'Thistlewood',
  'Underhill',
  'Vasquez',
  'Whitmore',
  'Yamamoto',
];

/** A few very common full names, each given to many patients with different birth dates. */
const CLUSTERS: Array<[string, string]> = [
  ['James', 'Smith'],
  ['Maria', 'Garcia'],
  ['Michael', 'Johnson'],
  ['David', 'Nguyen'],
  ['Mary', 'Williams'],
];

export interface PopulationOptions {
  seed: number;
  size: number;
  /** share of patients in twin pairs, namesake pairs, common-name clusters, hyphenated last names */
  twinShare?: number;
  namesakeShare?: number;
  clusterShare?: number;
  hyphenShare?: number;
}

export type PacketKind =
  | 'exact'
  | 'nickname'
  | 'first_typo'
  | 'last_typo'
  | 'swapped'
  | 'case'
  | 'accent'
  | 'missing_email'
  | 'different_email'
  | 'namesake'
  | 'twin'
  | 'not_in_chart';

export const PACKET_KINDS: readonly PacketKind[] = [
  'exact',
  'nickname',
  'first_typo',
  'last_typo',
  'swapped',
  'case',
  'accent',
  'missing_email',
  'different_email',
  'namesake',
  'twin',
  'not_in_chart',
];

export interface EvalPacket {
  kind: PacketKind;
  submissionId: string;
  /** the chart patient the packet is about; undefined for people not in the chart */
  truth?: string;
  identifiable: boolean;
  patient: { firstName: string; lastName: string; dob: string; email?: string };
}

export interface Population {
  patients: Patient[];
  packets: EvalPacket[];
}

const pick = <T>(rand: () => number, list: readonly T[]): T => list[Math.floor(rand() * list.length)]!;

function dateOfBirth(rand: () => number): string {
  const start = Date.UTC(1940, 0, 1);
  const end = Date.UTC(2015, 11, 31);
  return new Date(start + Math.floor(rand() * ((end - start) / 86_400_000)) * 86_400_000).toISOString().slice(0, 10);
}

function ascii(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/[^A-Za-z]/g, '')
    .toLowerCase();
}

/** One typo on a name of 4+ letters: substitution, insertion, deletion or adjacent swap, never an accent-only change. */
export function typo(rand: () => number, name: string): string {
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  for (let attempt = 0; attempt < 20; attempt++) {
    const chars = [...name];
    const i = 1 + Math.floor(rand() * (chars.length - 2));
    const op = Math.floor(rand() * 4);
    if (op === 0) chars[i] = pick(rand, [...letters]);
    else if (op === 1) chars.splice(i, 0, pick(rand, [...letters]));
    else if (op === 2) chars.splice(i, 1);
    else [chars[i], chars[i + 1]] = [chars[i + 1] ?? chars[i]!, chars[i]!];
    const out = chars.join('');
    if (normaliseName(out) !== normaliseName(name) && normaliseName(out).length >= 3) return out;
  }
  return `${name}x`;
}

function nicknameOf(rand: () => number, first: string): string | undefined {
  const n = normaliseName(first);
  const groups = NICKNAME_GROUPS.filter((g) => g[0] === n);
  if (groups.length === 0) return undefined;
  const options = groups[0]!.filter((x) => x !== n);
  const chosen = pick(rand, options);
  return chosen.charAt(0).toUpperCase() + chosen.slice(1);
}

function withAccentChange(value: string): string {
  const stripped = value
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .replace(/ø/g, 'o')
    .replace(/Ø/g, 'O')
    .replace(/ł/g, 'l')
    .replace(/Ł/g, 'L');
  if (stripped !== value) return stripped;
  // an ASCII name: add an accent to its first vowel
  return value.replace(/[aeiou]/, (v) => ({ a: 'á', e: 'é', i: 'í', o: 'ó', u: 'ú' })[v] ?? v);
}

function flipCase(value: string, upper: boolean): string {
  return upper ? value.toUpperCase() : value.toLowerCase();
}

export function generatePopulation(options: PopulationOptions, packetsPerKind: number): Population {
  const rand = seededRandom(options.seed);
  const patients: Patient[] = [];
  let n = 0;
  const add = (given: string, family: string, birthDate: string, address?: Patient['address']) => {
    n++;
    const id = `eval-${options.seed}-${String(n).padStart(5, '0')}`;
    const email = rand() < 0.85 ? `${ascii(given)}.${ascii(family)}.${n}@example.test` : undefined;
    patients.push({
      patientId: id,
      mrn: `EVAL-${options.seed}-${n}`,
      assigningAuthority: 'EVAL-HOSP',
      name: { given, family },
      birthDate,
      sex: rand() < 0.5 ? 'F' : 'M',
      address: address ?? { line1: `${1 + Math.floor(rand() * 999)} Eval Street`, city: 'Testville', postalCode: String(10000 + Math.floor(rand() * 89999)) },
      ...(email ? { email } : {}),
    });
    return id;
  };

  const twinPairs = Math.round((options.size * (options.twinShare ?? 0.03)) / 2);
  const namesakePairs = Math.round((options.size * (options.namesakeShare ?? 0.02)) / 2);
  const clustered = Math.round(options.size * (options.clusterShare ?? 0.06));
  const twins: string[] = [];
  const namesakes: string[] = [];
  for (let i = 0; i < twinPairs; i++) {
    const family = pick(rand, LAST);
    const dob = dateOfBirth(rand);
    const address = { line1: `${i + 1} Twin Lane`, city: 'Testville', postalCode: '12345' };
    const a = pick(rand, FIRST);
    let b = pick(rand, FIRST);
    while (normaliseName(b) === normaliseName(a)) b = pick(rand, FIRST);
    twins.push(add(a, family, dob, address), add(b, family, dob, address));
  }
  for (let i = 0; i < namesakePairs; i++) {
    const given = pick(rand, FIRST);
    const family = pick(rand, LAST);
    const dob = dateOfBirth(rand);
    namesakes.push(add(given, family, dob), add(given, family, dob));
  }
  for (let i = 0; i < clustered; i++) {
    const [given, family] = pick(rand, CLUSTERS);
    add(given, family, dateOfBirth(rand));
  }
  while (patients.length < options.size) {
    const family = rand() < (options.hyphenShare ?? 0.05) ? `${pick(rand, LAST)}-${pick(rand, LAST)}` : pick(rand, LAST);
    add(pick(rand, FIRST), family, dateOfBirth(rand));
  }

  // who shares a last name and birth date with someone else (twins, namesakes, coincidences)
  const blockCount = new Map<string, number>();
  const blockOf = (p: Patient) => `${normaliseName(p.name.family)}|${p.birthDate}`;
  for (const p of patients) blockCount.set(blockOf(p), (blockCount.get(blockOf(p)) ?? 0) + 1);
  const hasSibling = (p: Patient) => (blockCount.get(blockOf(p)) ?? 0) > 1;
  const byId = new Map(patients.map((p) => [p.patientId, p]));

  const packets: EvalPacket[] = [];
  let s = 0;
  const push = (kind: PacketKind, p: Patient | undefined, patient: EvalPacket['patient']) => {
    s++;
    const carriesEmail = !!p?.email && patient.email === p.email;
    packets.push({
      kind,
      submissionId: `eval-${options.seed}-${kind}-${s}`,
      truth: p?.patientId,
      identifiable: !!p && (!hasSibling(p) || carriesEmail),
      patient,
    });
  };
  const sample = (filter: (p: Patient) => boolean): Patient[] => {
    const pool = patients.filter(filter);
    const out: Patient[] = [];
    for (let i = 0; i < packetsPerKind && pool.length > 0; i++) out.push(pool.splice(Math.floor(rand() * pool.length), 1)[0]!);
    return out;
  };
  const base = (p: Patient) => ({ firstName: p.name.given!, lastName: p.name.family, dob: p.birthDate! });
  const long = (v: string | undefined) => normaliseName(v).length >= 4;

  for (const p of sample(() => true)) push('exact', p, { ...base(p), ...(p.email ? { email: p.email } : {}) });
  for (const p of sample((x) => !!nicknameOf(() => 0, x.name.given!))) push('nickname', p, { ...base(p), firstName: nicknameOf(rand, p.name.given!)! });
  for (const p of sample((x) => long(x.name.given))) push('first_typo', p, { ...base(p), firstName: typo(rand, p.name.given!) });
  for (const p of sample((x) => long(x.name.family))) push('last_typo', p, { ...base(p), lastName: typo(rand, p.name.family) });
  for (const p of sample(() => true)) push('swapped', p, { ...base(p), firstName: p.name.family, lastName: p.name.given! });
  for (const p of sample(() => true)) {
    const upper = rand() < 0.5;
    push('case', p, { ...base(p), firstName: flipCase(p.name.given!, upper), lastName: flipCase(p.name.family, !upper) });
  }
  for (const p of sample(() => true)) push('accent', p, { ...base(p), firstName: withAccentChange(p.name.given!), lastName: withAccentChange(p.name.family) });
  for (const p of sample(() => true)) push('missing_email', p, base(p));
  for (const p of sample(() => true)) push('different_email', p, { ...base(p), email: `changed.${ascii(p.name.given!)}@example.org` });
  for (const id of sample((x) => namesakes.includes(x.patientId)).map((x) => x.patientId)) push('namesake', byId.get(id), base(byId.get(id)!));
  for (const id of sample((x) => twins.includes(x.patientId)).map((x) => x.patientId)) push('twin', byId.get(id), base(byId.get(id)!));
  const known = new Set(patients.map((p) => `${normaliseName(p.name.given)}|${normaliseName(p.name.family)}|${p.birthDate}`));
  for (let i = 0; i < packetsPerKind; i++) {
    let person = { firstName: pick(rand, FIRST), lastName: pick(rand, LAST), dob: dateOfBirth(rand) };
    while (known.has(`${normaliseName(person.firstName)}|${normaliseName(person.lastName)}|${person.dob}`)) person = { ...person, dob: dateOfBirth(rand) };
    push('not_in_chart', undefined, { ...person, email: `${ascii(person.firstName)}.${i}@elsewhere.example` });
  }
  return { patients, packets };
}
