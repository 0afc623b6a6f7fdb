/**
 * Patient identifiers compared one way everywhere (the MRN index, the chart import, HL7 intake, staff
 * search): an MRN is trimmed, its inner white space removed and upper-cased (`demo-000002` and
 * ` DEMO-000002 ` are one MRN); an assigning authority is NFKC-normalised, stripped of invisible
 * (default-ignorable) characters, trimmed and upper-cased, so `DEMO-LAB\u200b` and full-width
 * `ＤＥＭＯ-ＬＡＢ` are DEMO-LAB. Claimed authorities are visible ASCII only (lib/keys/chart-authority.ts);
 * an authority that still holds other characters after this is a look-alike (`DЕMO-LAB` with a
 * Cyrillic Е) that intake refuses (lookAlikeAuthority).
 */

export function normaliseMrn(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

export function normaliseAuthority(value: string): string {
  return value
    .normalize('NFKC')
    .replace(/\p{Default_Ignorable_Code_Point}/gu, '')
    .trim()
    .toUpperCase();
}

/** Whether a normalised authority holds anything but visible ASCII: no partner can own it, and it can pass for one that is owned. */
export function lookAlikeAuthority(normalised: string): boolean {
  return /[^ -~]/.test(normalised);
}
