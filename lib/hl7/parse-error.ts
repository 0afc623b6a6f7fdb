/**
 * The one error the HL7 parser throws. It carries an HL7 table 0357 code and, when known, the location
 * (segment id, segment sequence, field, component) that an ACK's ERR-2 reports. The message names the
 * rule that failed, never the offending value (it may be PHI), so it is safe to log and to put in an ACK.
 */

/** HL7 table 0357 (message error condition codes) values this service uses. */
export const ErrorCodes = {
  segmentSequence: '100',
  requiredFieldMissing: '101',
  dataType: '102',
  tableValueNotFound: '103',
  valueTooLong: '104',
  unsupportedMessageType: '200',
  unsupportedEventCode: '201',
  unsupportedProcessingId: '202',
  unsupportedVersionId: '203',
  unknownKeyIdentifier: '204',
  duplicateKeyIdentifier: '205',
  applicationRecordLocked: '206',
  applicationInternalError: '207',
} as const;
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** ERR-2 (ERL): where an error is. Numbers are 1-based; `segmentSequence` counts segments of that id. */
export interface ErrorLocation {
  segmentId: string;
  segmentSequence?: number;
  field?: number;
  fieldRepetition?: number;
  component?: number;
  subcomponent?: number;
}

export class Hl7ParseError extends Error {
  readonly code: ErrorCode;
  readonly location?: ErrorLocation;

  constructor(code: ErrorCode, problem: string, location?: ErrorLocation) {
    super(problem);
    this.name = 'Hl7ParseError';
    this.code = code;
    this.location = location;
  }
}

export function isHl7ParseError(error: unknown): error is Hl7ParseError {
  return error instanceof Hl7ParseError;
}
