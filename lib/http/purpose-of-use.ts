/**
 * `x-purpose-of-use`: the HL7 v3 PurposeOfUse (2.16.840.1.113883.1.11.20448) a partner names for an
 * export or FHIR read (TREAT, ETREAT, HPAYMT, HOPERAT, PUBHLTH, HRESCH, PATRQT, COC, CAREMGT, HLEGAL,
 * HSYSADMIN). Read once by the pipeline, after the access decision and before the endpoint's code,
 * into `request.purposeOfUse`; the disclosure the audit step records carries it (else the
 * relationship's purpose, else TREAT: lib/relationships/patient-access.ts purposeOfDisclosure).
 * A value outside the list, or two different values, is a 400 naming the header (an OperationOutcome
 * on FHIR routes, through the route's problem renderer), before anything is read or recorded. Other
 * routes ignore the header.
 */
import { disclosesPatientRecords } from '../disclosures/disclosing-routes';
import { isPurposeOfUse, PURPOSES_OF_USE, type PurposeOfUse } from '../relationships/relationships';
import { headerValues } from './headers';
import { HttpProblem } from './problem';
import { requestState, type MiddyRequest } from './request-state';
import type { APIGatewayProxyEvent } from 'aws-lambda';

export const PURPOSE_OF_USE_HEADER = 'x-purpose-of-use';

/** The purpose the request named, undefined when it named none; a 400 naming the header for any other value. */
export function requestedPurposeOfUse(event: Pick<APIGatewayProxyEvent, 'headers' | 'multiValueHeaders'>): PurposeOfUse | undefined {
  const values = [
    ...new Set(
      headerValues(event, PURPOSE_OF_USE_HEADER)
        .flatMap((v) => v.split(','))
        .map((v) => v.trim()),
    ),
  ];
  if (values.length === 0 || (values.length === 1 && values[0] === '')) return undefined;
  const value = values.length === 1 ? values[0]! : undefined;
  if (value === undefined || !isPurposeOfUse(value)) {
    const message = `must be one HL7 v3 PurposeOfUse code: ${PURPOSES_OF_USE.join(', ')}`;
    throw new HttpProblem('validation', `${PURPOSE_OF_USE_HEADER} ${message}`, { errors: [{ header: PURPOSE_OF_USE_HEADER, message }] });
  }
  return value;
}

/** The pipeline step: on a disclosing route, `request.purposeOfUse` from the header. */
export function purposeOfUseHeader() {
  return {
    before: async (request: MiddyRequest) => {
      const state = requestState(request)!;
      if (!disclosesPatientRecords(state.endpoint)) return;
      state.purposeOfUse = requestedPurposeOfUse(request.event);
    },
  };
}
