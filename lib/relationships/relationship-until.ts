/**
 * The `until` of a relationship as an operator or a chart import gives it (`--until`,
 * `relationships[].until`): a calendar date holds through that whole day (UTC), so `2027-06-30`
 * is stored as the instant it stops, `2027-07-01T00:00:00.000Z`; a date-time with seconds and an
 * offset is that instant. Stored as ISO 8601 UTC (PartnerPatientRelationship.until).
 */
const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/;

/** What an `until` must look like, for messages. */
export const UNTIL_RULE = 'must be a date YYYY-MM-DD (it holds through that day, UTC) or a date-time with seconds and an offset, e.g. 2027-06-30T17:00:00Z';

/** The instant the relationship stops holding (ISO 8601 UTC), or undefined when `raw` is neither a real date nor a date-time. */
export function untilInstant(raw: string): string | undefined {
  const date = DATE.exec(raw);
  if (date) {
    const [year, month, day] = date.slice(1).map(Number) as [number, number, number];
    const start = new Date(Date.UTC(year, month - 1, day));
    if (start.getUTCFullYear() !== year || start.getUTCMonth() !== month - 1 || start.getUTCDate() !== day) return undefined;
    return new Date(start.getTime() + 86_400_000).toISOString();
  }
  if (!DATE_TIME.test(raw)) return undefined;
  const at = Date.parse(raw);
  return Number.isNaN(at) ? undefined : new Date(at).toISOString();
}
