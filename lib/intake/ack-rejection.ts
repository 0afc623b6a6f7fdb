/** The refusal of an HL7 message: AE/AR with ERR entries, thrown before anything is written. */
import type { AckError } from '../hl7/ack';
import type { ErrorCode, ErrorLocation } from '../hl7/parse-error';

export class AckRejection extends Error {
  constructor(
    readonly code: 'AE' | 'AR',
    readonly errors: AckError[],
  ) {
    super(errors[0]?.message ?? 'rejected');
    this.name = 'AckRejection';
  }
}

export function reject(code: 'AE' | 'AR', errorCode: ErrorCode, message: string, location?: ErrorLocation): never {
  throw new AckRejection(code, [{ code: errorCode, message, location }]);
}
