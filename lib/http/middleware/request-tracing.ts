import type { HttpRoute } from '../../config/service';
import { headerValues } from '../headers';
import { HttpProblem } from '../problem';
import { isValidRequestId, newRequestId } from '../request-id';
import { setRequestState, type MiddyRequest, type RequestState } from '../request-state';
import { decodeDecision } from '../../keys/authorizer-context';

/**
 * First in the pipeline: fixes the request id (the caller's x-request-id when valid, else a new
 * UUID) so every response and log line carries it. An invalid x-request-id is a 400, answered
 * under a fresh id.
 */
export function requestTracing(endpoint: HttpRoute, clock: () => Date) {
  return {
    before: async (request: MiddyRequest) => {
      const now = clock();
      const supplied = headerValues(request.event, 'x-request-id');
      const state: RequestState = { endpoint, requestId: newRequestId(), requestIdSupplied: false, startedAt: Date.now(), now };
      setRequestState(request, state);
      // the authorizer has already counted this request: its rate-limit state belongs on every answer
      state.decision = decodeDecision(request.event.requestContext?.authorizer as Record<string, unknown> | undefined);
      state.rateLimit = state.decision?.rateLimit;
      if (supplied.length === 0) return;
      const distinct = [...new Set(supplied)];
      if (distinct.length > 1 || !isValidRequestId(distinct[0]!)) {
        throw new HttpProblem('badRequest', 'x-request-id must be sent once, as 1 to 128 visible ASCII characters');
      }
      state.requestId = distinct[0]!;
      state.requestIdSupplied = true;
    },
  };
}
