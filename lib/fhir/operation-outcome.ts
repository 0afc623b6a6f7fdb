/** Errors as FHIR R4 OperationOutcome. Pure; the text is the client-safe problem detail. */
import type { OperationOutcome, OperationOutcomeIssue } from '@medplum/fhirtypes';

export type IssueCode = OperationOutcomeIssue['code'];

/** HTTP status -> the issue type that says the same thing (FHIR issue-type value set). */
export function issueCodeForStatus(status: number): IssueCode {
  switch (status) {
    case 400:
      return 'invalid';
    case 401:
      return 'login';
    case 403:
      return 'forbidden';
    case 404:
      return 'not-found';
    case 406:
    case 415:
      return 'not-supported';
    case 409:
      return 'conflict';
    case 413:
      return 'too-costly';
    case 429:
      return 'throttled';
    case 503:
      return 'transient';
    default:
      return status >= 500 ? 'exception' : 'processing';
  }
}

export interface OutcomeInput {
  status: number;
  /** the problem's detail, written for the caller */
  detail: string;
  /** the request id, so a partner can quote it */
  requestId: string;
  /** one issue per failing parameter or header: [location, message] */
  fields?: Array<{ location: string; message: string }>;
}

export function operationOutcome(input: OutcomeInput): OperationOutcome {
  const code = issueCodeForStatus(input.status);
  const severity = input.status >= 500 ? 'fatal' : 'error';
  const issue: OperationOutcomeIssue[] = input.fields?.length
    ? input.fields.map((f) => ({ severity, code, diagnostics: `${f.location} ${f.message}` }))
    : [{ severity, code, diagnostics: input.detail }];
  return {
    resourceType: 'OperationOutcome',
    text: {
      status: 'generated',
      div: `<div xmlns="http://www.w3.org/1999/xhtml"><p>${escapeXhtml(input.detail)}</p><p>requestId ${escapeXhtml(input.requestId)}</p></div>`,
    },
    issue,
  };
}

function escapeXhtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
