/**
 * What a reviewer compares, in plain words: a packet (or a record held from a partner) beside a chart
 * patient, field by field, with every disagreement named; the matcher's codes (states, reasons,
 * scoring rules, sex codes) in the words a clinic uses. No DOM here: tested in test/web/.
 */

export interface PersonFields {
  firstName?: string;
  lastName?: string;
  /** middle names of a chart patient, shown but not compared (forms send none) */
  middleName?: string;
  birthDate?: string;
  sex?: string;
  email?: string;
  phone?: string;
  address?: { line1?: string; line2?: string; city?: string; state?: string; postalCode?: string };
  mrn?: string;
}

export type FieldKey = 'name' | 'birthDate' | 'sex' | 'email' | 'phone' | 'address' | 'mrn';

export interface FieldComparison {
  key: FieldKey;
  label: string;
  /** what the packet or partner sent, in words ('not sent' when absent) */
  sent: string;
  /** what the chart holds, in words ('not in the chart' when absent) */
  chart: string;
  /** both sides have the field and they disagree */
  differs: boolean;
}

export const FIELD_LABELS: Record<FieldKey, string> = {
  name: 'Name',
  birthDate: 'Birth date',
  sex: 'Sex',
  email: 'Email',
  phone: 'Phone',
  address: 'Address',
  mrn: 'MRN',
};

const SEX_WORDS: Record<string, string> = { F: 'Female', M: 'Male', O: 'Other', U: 'Unknown', A: 'Ambiguous', N: 'Not applicable' };
export const sexText = (sex: string | undefined) => (sex ? (SEX_WORDS[sex.toUpperCase()] ?? sex) : undefined);

const fold = (v: string | undefined) =>
  (v ?? '')
    .normalize('NFD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9@.+]+/g, ' ')
    .trim();
const digits = (v: string | undefined) => (v ?? '').replace(/\D+/g, '');
/** the same number, with or without a country or area prefix (at least 7 digits in common at the end) */
const samePhone = (a: string, b: string) => {
  const [x, y] = [digits(a), digits(b)];
  return x === y || (Math.min(x.length, y.length) >= 7 && (x.endsWith(y) || y.endsWith(x)));
};

export const personNameText = (p: PersonFields) => [p.firstName, p.middleName, p.lastName].filter(Boolean).join(' ');
export const addressText = (a: PersonFields['address']) =>
  a ? [a.line1, a.line2, a.city, a.state, a.postalCode].filter(Boolean).join(', ') || undefined : undefined;

/** Each field both people can have, in the order the page shows them; differs only when both sides have it. */
export function compareFields(sent: PersonFields, chart: PersonFields): FieldComparison[] {
  const row = (key: FieldKey, a: string | undefined, b: string | undefined, same: (a: string, b: string) => boolean): FieldComparison => ({
    key,
    label: FIELD_LABELS[key],
    sent: a || 'not sent',
    chart: b || 'not in the chart',
    differs: Boolean(a && b && !same(a, b)),
  });
  const firstOf = (v: string | undefined) => fold(v).split(' ')[0] ?? '';
  const nameDiffers =
    Boolean(sent.lastName && chart.lastName && fold(sent.lastName) !== fold(chart.lastName)) ||
    Boolean(sent.firstName && chart.firstName && firstOf(sent.firstName) !== firstOf(chart.firstName));
  const sentName = [sent.firstName, sent.middleName, sent.lastName].filter(Boolean).join(' ');
  return [
    { key: 'name', label: FIELD_LABELS.name, sent: sentName || 'not sent', chart: personNameText(chart) || 'not in the chart', differs: nameDiffers },
    row('birthDate', sent.birthDate, chart.birthDate, (a, b) => a === b),
    row('sex', sexText(sent.sex), sexText(chart.sex), (a, b) => a === b || a === 'Unknown' || b === 'Unknown'),
    row('email', sent.email, chart.email, (a, b) => fold(a) === fold(b)),
    row('phone', sent.phone, chart.phone, samePhone),
    row('address', addressText(sent.address), addressText(chart.address), (a, b) => fold(a) === fold(b)),
    // an MRN is only compared when the sender used the chart's own MRN; a partner's identifiers are in its namespace
    row('mrn', sent.mrn, chart.mrn, (a, b) => fold(a) === fold(b)),
  ];
}

/** "birth date and email" */
export function differencesText(rows: FieldComparison[]): string | undefined {
  const names = rows.filter((r) => r.differs).map((r) => r.label.toLowerCase());
  if (names.length === 0) return undefined;
  return names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names[names.length - 1]}`;
}

export const STATE_WORDS: Record<string, string> = {
  pending_match: 'Waiting for automatic matching',
  pending_review: 'Waiting for review',
  matched: 'Filed automatically',
  routed: 'Filed to the patient the sender named',
  routed_manually: 'Filed by a reviewer',
  held: 'Waiting for review',
};

export const ACTION_WORDS: Record<string, string> = {
  received: 'Received',
  matched: 'Filed automatically',
  held_for_review: 'Put in the review queue',
  requeued: 'Sent back to automatic matching',
  routed_manually: 'Filed by a reviewer',
  assessed: 'Possible charts looked up',
};

export function actorText(actor: string, staffUsername?: string, action?: string): string {
  if (staffUsername) return staffUsername;
  // a key acts for the partner that sent the packet, or for a reviewing system that routed it
  if (actor === 'api-key') return action === 'routed_manually' ? 'Reviewing system' : 'Sending system';
  if (actor === 'matcher') return 'Automatic matching';
  if (actor === 'sweeper') return 'Automatic retry';
  if (actor === 'staff') return 'Staff member';
  return actor;
}

const RULE_WORDS: Record<string, string> = {
  dob_exact: 'Birth date is the same',
  first_name_exact: 'First name is the same',
  first_name_nickname: 'First name is a nickname of the chart’s',
  first_name_edit1: 'First name differs by one letter',
  first_name_phonetic: 'First name sounds the same',
  first_name_initial: 'First name matches by its initial',
  first_name_disagree: 'First name is different',
  last_name_exact: 'Last name is the same',
  last_name_token: 'Shares one part of a double last name',
  last_name_edit1: 'Last name differs by one letter',
  last_name_phonetic: 'Last name sounds the same',
  last_name_disagree: 'Last name is different',
  names_swapped: 'First and last names are swapped',
  email_exact: 'Email is the same',
  email_mismatch: 'Email is different',
  external_id_mrn: 'The form’s patient id is this chart’s MRN',
  margin_over_runner_up: 'Lead over the next possible chart',
  last_name_dob: 'Same last name and birth date',
};

/** A matcher rule (`dob_exact:+14.6`) in words, and its points apart for the details view. */
export function ruleText(reason: string): { words: string; points?: string } {
  const shared = /^shares_last_name_and_dob_with:(\d+)$/.exec(reason);
  if (shared) {
    const n = Number(shared[1]);
    return { words: `Shares last name and birth date with ${n} other chart patient${n === 1 ? '' : 's'}` };
  }
  const at = reason.lastIndexOf(':');
  const rule = at > 0 ? reason.slice(0, at) : reason;
  const points = at > 0 ? reason.slice(at + 1) : undefined;
  const words = RULE_WORDS[rule] ?? rule.replace(/_/g, ' ').replace(/^./, (c) => c.toUpperCase());
  return points === undefined ? { words } : { words, points };
}

/** An answer key as a label: the form's own label when it is one already, else `reasonForVisit` -> `Reason for visit`. */
export function answerLabel(key: string): string {
  if (/\s/.test(key)) return key;
  const words = key
    .replace(/[_-]+/g, ' ')
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .trim()
    .toLowerCase();
  return words ? words.charAt(0).toUpperCase() + words.slice(1) : key;
}
