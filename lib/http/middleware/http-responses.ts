import type { APIGatewayProxyResult } from 'aws-lambda';
import { logger } from '../../observability/logger';
import { operationOutcome } from '../../fhir/operation-outcome';
import { FHIR_CONTENT_TYPE } from '../fhir';
import { problemForError } from '../domain-problems';
import type { FieldError, ProblemBody } from '../problem';
import { newRequestId } from '../request-id';
import { requestState, type MiddyRequest } from '../request-state';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * Last in the pipeline: turns errors into problem+json (a generic 500/503 for anything that is not
 * an `HttpProblem`, with no stack and no message from inside), and gives every response the same
 * headers: x-request-id, the rate-limit trio, Cache-Control no-store (PHI), Retry-After on 429/503.
 * Writes one log line per request with ids, status and timing only.
 */
export function httpResponses() {
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
      const body: ProblemBody = problem.toBody(requestId);
      // FHIR routes answer the same problem as an OperationOutcome (same status, headers and text)
      const fhir = state?.endpoint.format === 'fhir';
      const rendered = fhir
        ? JSON.stringify(operationOutcome({ status: body.status, detail: body.detail, requestId, fields: body.errors?.map(fieldLocation) }))
        : JSON.stringify(body);
      request.response = decorate(
        request,
        {
          statusCode: problem.status,
          headers: { 'content-type': fhir ? FHIR_CONTENT_TYPE : PROBLEM_CONTENT_TYPE, ...(problem.extras.headers ?? {}) },
          body: rendered,
        },
        expected ? undefined : (error as Error | undefined)?.name,
      );
    },
  };
}

function fieldLocation(error: FieldError): { location: string; message: string } {
  if ('parameter' in error) return { location: error.parameter, message: error.message };
  if ('header' in error) return { location: `header ${error.header}`, message: error.message };
  return { location: error.pointer, message: error.message };
}
