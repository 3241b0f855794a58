import type { APIGatewayAuthorizerResult } from 'aws-lambda';
import type { Decision } from './authorize';
import { UnauthorizedError } from './errors';

/**
 * A decision in API Gateway's terms (IAM policy form, not simple responses:
 * only the policy form distinguishes 401 from 403). API Gateway turns the
 * error message `Unauthorized` into a 401 and a Deny into a 403; serverless
 * offline does the same, so the local stack answers as AWS would.
 *
 * The policy names the ROUTE, not the request: on AWS the bearer decision is
 * cached by token and route key (plugins/aws-operations), and the cached
 * policy is evaluated against every later request of that route, whose ARN
 * names its own path (`…/GET/downloads/<another id>`). A policy naming only
 * the first request's path would deny the second (decision 381).
 */

/**
 * `routeArn` (`arn:aws:execute-api:<region>:<account>:<api>/<stage>/<METHOD>/<path>`) widened to its route:
 * each `{param}` or `{proxy+}` of the route key becomes `*`. Anything unexpected stays the request's own ARN.
 */
export function routeResource(routeArn: string, routeKey: string): string {
  const head = /^(arn:[^/]+\/[^/]+)\//.exec(routeArn)?.[1];
  const route = /^([A-Z]+) (\/[^\s]*)$/.exec(routeKey);
  if (!head || !route) return routeArn;
  const [, method, path] = route;
  return `${head}/${method}${path.replace(/\{[^}/]+\}/g, '*')}`;
}

export function gatewayAnswer(decision: Decision, routeArn: string, routeKey: string): APIGatewayAuthorizerResult {
  const resource = routeResource(routeArn, routeKey);
  if (decision.effect === 'unauthenticated') throw new UnauthorizedError();
  if (decision.effect === 'anonymous') {
    // API Gateway cannot redirect: the page function does, from an empty principal, before any other work.
    return {
      principalId: 'anonymous',
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: resource }],
      },
      context: { principal: '', scope: '', scopes: '', csrf: '' },
    };
  }
  if (decision.effect === 'page-forbidden') {
    // Allowed through to the page function ONLY to answer 403 with a page: `scope` stays empty, `denied` names what it lacks.
    return {
      principalId: decision.principal,
      policyDocument: {
        Version: '2012-10-17',
        Statement: [{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: resource }],
      },
      context: {
        principal: decision.principal,
        scope: '',
        scopes: decision.scopes.join(' '),
        csrf: decision.csrf,
        denied: decision.scope,
      },
    };
  }
  return {
    principalId: decision.principal,
    policyDocument: {
      Version: '2012-10-17',
      Statement: [
        { Action: 'execute-api:Invoke', Effect: decision.effect === 'allow' ? 'Allow' : 'Deny', Resource: resource },
      ],
    },
    // Handlers read who called from requestContext.authorizer; never the token.
    context: {
      principal: decision.principal,
      scope: decision.effect === 'allow' ? decision.scope : '',
      // UI routes only: what the page may offer, and the session's form token.
      ...(decision.effect === 'allow' && decision.csrf
        ? { scopes: (decision.scopes ?? []).join(' '), csrf: decision.csrf }
        : {}),
    },
  };
}
