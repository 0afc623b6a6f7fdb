import { holdsRouteScope, routeScopes } from '../../config/routes';
import { HttpProblem } from '../problem';
import { requestState, type MiddyRequest } from '../request-state';

/**
 * Renders the authorizer's decision. Nothing after this middleware runs unless the key is valid,
 * the partner active, the rate limit not exceeded and the scope present. A request that reached
 * the function without an authorizer decision is refused (fail closed).
 */
export function accessControl() {
  return {
    before: async (request: MiddyRequest) => {
      const state = requestState(request)!;
      const decision = state.decision;
      if (!decision) throw new HttpProblem('unauthenticated', 'the request carried no verifiable API key decision');
      switch (decision.outcome) {
        case 'unauthenticated':
          throw new HttpProblem('unauthenticated', decision.reason);
        case 'rate_limited':
          throw new HttpProblem('rateLimited', `${decision.reason}; retry after the window resets`);
        case 'forbidden':
          throw new HttpProblem('forbidden', decision.reason);
        case 'allow':
          break;
        default:
          throw new HttpProblem('unauthenticated', 'unrecognised access decision');
      }
      if (!decision.principal || (!state.endpoint.anonymous && !holdsRouteScope(decision.principal.scopes, state.endpoint))) {
        throw new HttpProblem('forbidden', `this API key lacks the scope ${routeScopes(state.endpoint).join(' or ')}`);
      }
      state.principal = decision.principal;
    },
  };
}
