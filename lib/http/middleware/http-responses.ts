import type { APIGatewayProxyResult } from 'aws-lambda';
import { logger } from '../../observability/logger';
import { problemForError } from '../domain-problems';
import type { ProblemBody } from '../problem';
import { newRequestId } from '../request-id';
import { requestState, type MiddyRequest } from '../request-state';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/** How an endpoint writes a problem: problem+json, or (FHIR routes, lib/http/fhir.ts) an OperationOutcome. */
export type ProblemRenderer = (problem: ProblemBody) => { contentType: string; body: string };

export const problemJson: ProblemRenderer = (problem) => ({ contentType: PROBLEM_CONTENT_TYPE, body: JSON.stringify(problem) });

/**
 * Last in the pipeline: turns errors into problem+json (a generic 500/503 for anything that is not
 * an `HttpProblem`, with no stack and no message from inside), and gives every response the same
 * headers: x-request-id, the rate-limit trio, Cache-Control no-store (PHI), Retry-After on 429/503.
 * Writes one log line per request with ids, status and timing only. `renderProblem` writes the
 * problem (FHIR endpoints pass theirs, so only their bundles carry the OperationOutcome writer).
 */
export function httpResponses(renderProblem: ProblemRenderer = problemJson) {
  const decorate = (request: MiddyRequest, response: APIGatewayProxyResult, errorName?: string) => {
    const state = requestState(request);
    const requestId = state?.requestId ?? newRequestId();
    const headers: Record<string, string> = { ...(response.headers as Record<string, string> | undefined) };
    headers['x-request-id'] = requestId;
    headers['cache-control'] = 'no-store';
    if (state?.rateLimit) {
      headers['x-ratelimit-limit'] = String(state.rateLimit.limit);
      headers['x-ratelimit-remaining'] = String(state.rateLimit.remaining);
      headers['x-ratelimit-reset'] = String(state.rateLimit.reset);
      if (response.statusCode === 429) headers['retry-after'] = String(Math.max(1, state.rateLimit.reset - Math.floor(Date.now() / 1000)));
    }
    response.headers = headers;
    logger.info('request.completed', {
      requestId,
      function: state?.endpoint.name,
      status: response.statusCode,
      durationMs: state ? Date.now() - state.startedAt : undefined,
      keyId: state?.principal?.keyId,
      partnerId: state?.principal?.partnerId,
      errorName,
    });
    return response;
  };

  return {
    after: async (request: MiddyRequest) => {
      request.response = decorate(request, request.response as APIGatewayProxyResult);
    },
    onError: async (request: MiddyRequest) => {
      const state = requestState(request);
      const requestId = state?.requestId ?? newRequestId();
      const error = request.error;
      const { problem, expected } = problemForError(error);
      if (!expected) {
        logger.error('request.failed', { requestId, function: state?.endpoint.name, errorName: (error as Error | undefined)?.name ?? 'unknown' });
      }
      const rendered = renderProblem(problem.toBody(requestId));
      request.response = decorate(
        request,
        {
          statusCode: problem.status,
          headers: { 'content-type': rendered.contentType, ...(problem.extras.headers ?? {}) },
          body: rendered.body,
        },
        expected ? undefined : (error as Error | undefined)?.name,
      );
    },
  };
}
