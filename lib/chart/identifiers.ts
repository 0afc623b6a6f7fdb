/**
 * Patient identifiers compared one way everywhere (the MRN index, the chart import, HL7 intake, staff
 * search): an MRN is trimmed, its inner white space removed and upper-cased (`demo-000002` and
 * ` DEMO-000002 ` are one MRN); an assigning authority is trimmed and upper-cased.
 */

export function normaliseMrn(value: string): string {
  return value.replace(/\s+/g, '').toUpperCase();
}

export function normaliseAuthority(value: string): string {
  return value.trim().toUpperCase();
}
