/**
 * Thrown when the chart data handed to an HL7 builder cannot be encoded into a valid HL7 v2.5.1 message
 * (a required value is missing, a date is malformed, a record belongs to another patient...).
 * The message names the offending input path; it never contains the offending value itself,
 * so it is safe to log (no PHI).
 */
export class Hl7EncodingError extends Error {
  /** dotted path of the input value that could not be encoded, e.g. `patient.birthDate` */
  readonly inputPath: string;

  constructor(inputPath: string, problem: string) {
    super(`${inputPath}: ${problem}`);
    this.name = 'Hl7EncodingError';
    this.inputPath = inputPath;
  }
}
