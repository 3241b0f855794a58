import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { authorizedPrincipal, type HttpMiddleware } from '../http/middlewares';
import { abandon, begin, finish, type Held, idempotencyKeyOf, type IdempotencyDeps } from './service';

/**
 * `Idempotency-Key` as a middy middleware (service.ts holds the policy):
 * before the core it claims the key, or answers with the stored result;
 * after it stores the core's answer (a 5xx releases the key); on an error it
 * releases the key so the retry runs. Put it after `requireAuthorizer`: the
 * record is scoped by the authorizer's principal.
 */
export function idempotency(options: {
  route: string;
  deps: () => IdempotencyDeps;
  /** The request's payload, validated: a bad request is refused before any record is written. */
  payload: (event: APIGatewayProxyEventV2) => unknown;
}): HttpMiddleware {
  // Per invocation, keyed by middy's request object (containers in offline may run invocations side by side).
  const heldBy = new WeakMap<object, Held>();
  return {
    name: 'idempotency',
    before: async (request) => {
      const clientKey = idempotencyKeyOf(request.event.headers);
      const principal = authorizedPrincipal(request.event);
      // Without a key the core runs alone and validates the body itself: parsed once, as before.
      if (clientKey === undefined || principal === undefined) return;
      const payload = options.payload(request.event);
      const begun = await begin(options.deps(), { route: options.route, principal, clientKey, payload });
      if ('replay' in begun) return begun.replay;
      if ('held' in begun) heldBy.set(request, begun.held);
    },
    after: async (request) => {
      const held = heldBy.get(request);
      if (held && request.response) await finish(options.deps(), held, request.response);
    },
    onError: async (request) => {
      const held = heldBy.get(request);
      if (held) await abandon(options.deps(), held);
    },
  };
}
