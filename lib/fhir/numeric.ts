/** Numeric chart text as a FHIR decimal, only when nothing is lost or added by the conversion. */

const PLAIN_DECIMAL = /^-?(0|[1-9]\d{0,14})(\.\d{1,15})?$/;

/** The text as a JSON number only when printing that number gives back the same text ("98", "5.4"; not "98.0", "<5", " 7"). */
export function numericValue(text: string): number | undefined {
  if (!PLAIN_DECIMAL.test(text)) return undefined;
  const value = Number(text);
  return Number.isFinite(value) && String(value) === text ? value : undefined;
}
