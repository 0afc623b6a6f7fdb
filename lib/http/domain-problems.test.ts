import {
  ConflictError,
  DependencyUnavailableError,
  ForbiddenByPolicyError,
  InvalidParameterError,
  MalformedRequestError,
  RecordNotFoundError,
  RequestInProgressError,
  ValidationFailedError,
} from '../domain-errors';
import { problemForError, statusForError } from './domain-problems';
import { HttpProblem } from './problem';

const body = (error: unknown) => problemForError(error).problem.toBody('req-1');

describe('problemForError: the one mapping from errors to answers', () => {
  it.each([
    [new RecordNotFoundError('note'), 404, '/problems/not-found', 'no note with these ids was found'],
    [
      new InvalidParameterError('_page_token', 'is not a token this server issued'),
      400,
      '/problems/validation-error',
      'query parameters are missing or invalid',
    ],
    [
      new ValidationFailedError('the lab result failed validation', [{ pointer: '/data', message: 'is required' }]),
      400,
      '/problems/validation-error',
      'the lab result failed validation',
    ],
    [new MalformedRequestError('the body holds no MSH segment'), 400, '/problems/bad-request', 'the body holds no MSH segment'],
    [new ConflictError('this x-request-id was already used'), 409, '/problems/conflict', 'this x-request-id was already used'],
    [new RequestInProgressError('still being processed', 7), 409, '/problems/request-in-progress', 'still being processed'],
    [new ForbiddenByPolicyError('not this sender', [{ pointer: '/data/senderID', message: 'is not yours' }]), 403, '/problems/forbidden', 'not this sender'],
    [new DependencyUnavailableError('chart-table'), 503, '/problems/service-unavailable', 'a dependency is temporarily unavailable; retry the same request'],
    [
      Object.assign(new Error('slow down'), { name: 'ThrottlingException' }),
      503,
      '/problems/service-unavailable',
      'a dependency is temporarily unavailable; retry the same request',
    ],
    [
      new TypeError('x is undefined'),
      500,
      '/problems/internal-error',
      'the request failed; it may have been partly applied: retry the same request (same x-request-id) to learn its outcome',
    ],
  ])('%s -> %i %s', (error, status, type, detail) => {
    const b = body(error);
    expect(b).toMatchObject({ status, type, detail, requestId: 'req-1' });
    // the audit middleware records the status the caller was answered
    expect(statusForError(error)).toBe(status);
    // nothing from inside an unexpected error reaches the caller
    expect(JSON.stringify(b)).not.toContain('undefined');
  });

  it('field errors, Retry-After and the expected flag travel with the mapping', () => {
    expect(body(new InvalidParameterError('_count', 'must be 1-100')).errors).toEqual([{ parameter: '_count', message: 'must be 1-100' }]);
    expect(body(new ForbiddenByPolicyError('no')).errors).toBeUndefined();
    expect(problemForError(new RequestInProgressError('wait', 7)).problem.extras.headers).toEqual({ 'retry-after': '7' });
    expect(problemForError(new DependencyUnavailableError('kms')).problem.extras.headers).toEqual({ 'retry-after': '2' });
    expect(problemForError(new ConflictError('c')).expected).toBe(true);
    expect(problemForError(new DependencyUnavailableError('kms')).expected).toBe(false);
    const own = new HttpProblem('notAcceptable', 'send Accept: application/hl7-v2');
    expect(problemForError(own)).toEqual({ problem: own, expected: true });
  });
});
