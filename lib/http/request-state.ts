import type { APIGatewayProxyEvent, Context } from 'aws-lambda';
import type { HttpRoute } from '../config/service';
import type { AccessDecision, Principal } from '../keys/access-decision';
import type { RateLimitState } from '../keys/rate-limiter';
import type { AuditEvent } from '../audit/audit-trail';
import type { PatientReach } from '../relationships/patient-access';
import type { PurposeOfUse } from '../relationships/relationships';

/** What the pipeline learns about a request before the endpoint's own code runs. */
export interface RequestState {
  endpoint: HttpRoute;
  requestId: string;
  /** true when the caller supplied x-request-id (it is then also the idempotency key) */
  requestIdSupplied: boolean;
  startedAt: number;
  now: Date;
  rateLimit?: RateLimitState;
  /** the authorizer's decision, decoded once from the event (undefined when absent or malformed) */
  decision?: AccessDecision;
  principal?: Principal;
  /** what this request touched, for the audit trail (set through `audit()`) */
  auditEvent?: AuditEvent;
  /** the purpose of use the caller named (`x-purpose-of-use`, HL7 v3 PurposeOfUse), when it named one */
  purposeOfUse?: PurposeOfUse;
  /** the patient read this request was allowed, with its relationship (lib/http/patient-gate.ts) */
  patientReach?: PatientReach & { patientId: string };
}

/** A request as the endpoint code sees it: the principal is known and allowed. */
export interface AuthorizedRequest extends RequestState {
  principal: Principal;
  event: APIGatewayProxyEvent;
  /**
   * Declares the PHI this request reads or changes. The pipeline appends the audit record with the
   * final outcome; a successful response is only sent once its audit record is written.
   */
  audit(event: AuditEvent): void;
}

export interface MiddyRequest {
  event: APIGatewayProxyEvent;
  context: Context;
  response?: unknown;
  error?: unknown;
  internal: Record<string, unknown>;
}

const stateKey = Symbol('interop.requestState');

/** The state lives on the Lambda context object, which middy hands to the endpoint code too. */
export function setRequestState(request: MiddyRequest, state: RequestState): void {
  (request.context as unknown as Record<symbol, RequestState>)[stateKey] = state;
}

export function requestState(request: MiddyRequest): RequestState | undefined {
  return stateFromContext(request.context);
}

export function stateFromContext(context: Context): RequestState | undefined {
  return (context as unknown as Record<symbol, RequestState | undefined>)[stateKey];
}
