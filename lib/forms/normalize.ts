/**
 * Normalisation used by the matcher and the match index, so that "O'Brien", "o brien" and
 * "OBRIEN" compare equal and "Zoë Ødegård" equals "Zoe Odegard".
 */
import { doubleMetaphone } from 'double-metaphone';
import { normaliseMrn } from '../chart/identifiers';

/** Letters that do not decompose under NFD, folded to their usual ASCII spelling. */
const FOLD: Record<string, string> = {
  ø: 'o',
  æ: 'ae',
  œ: 'oe',
  ß: 'ss',
  ł: 'l',
  đ: 'd',
  ð: 'd',
  þ: 'th',
  ı: 'i',
  ħ: 'h',
};

function fold(value: string): string {
  return value
    .normalize('NFKD')
    .replace(/\p{M}+/gu, '')
    .toLowerCase()
    .replace(/[øæœßłđðþıħ]/g, (c) => FOLD[c] ?? c);
}

/** A name as one run of a-z letters: diacritics folded, case, spaces, hyphens and apostrophes dropped. */
export function normaliseName(value: string | undefined | null): string {
  if (typeof value !== 'string') return '';
  return fold(value).replace(/[^a-z]/g, '');
}

/** The name's tokens (split on spaces, hyphens, dots, commas), each normalised; empty tokens dropped. */
export function nameTokens(value: string | undefined | null): string[] {
  if (typeof value !== 'string') return [];
  return fold(value)
    .split(/[\s\-.,/]+/)
    .map((t) => t.replace(/[^a-z]/g, ''))
    .filter((t) => t.length > 0);
}

/** Emails compare trimmed and case-insensitively. */
export function normaliseEmail(value: string | undefined | null): string {
  return typeof value === 'string' ? value.trim().toLowerCase() : '';
}

/** External identifiers and MRNs compare as the chart compares MRNs (lib/chart/identifiers.ts): no white space, upper case. */
export function normaliseIdentifier(value: string | undefined | null): string {
  return typeof value === 'string' ? normaliseMrn(value) : '';
}

/**
 * The Double Metaphone codes (primary and, when different, secondary) of a name, computed on the
 * normalised letters, so "Smith"/"Smyth" share "SM0" and "Zoë"/"Zoe" agree. Empty for an empty name.
 * The algorithm is the `double-metaphone` package (Lawrence Philips' algorithm, maintained by wooorm).
 */
export function phoneticCodes(value: string | undefined | null): string[] {
  const name = normaliseName(value);
  if (!name) return [];
  const [primary, secondary] = doubleMetaphone(name);
  return [...new Set([primary, secondary].filter((c) => c.length > 0))];
}
