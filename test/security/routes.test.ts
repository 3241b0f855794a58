import { PUBLIC_ROUTES, ROUTE_SCOPES, SESSION_ROUTES } from '../../lib/auth/scopes';
import { stackDefinition } from '../support/stack';

/**
 * Every HTTP route of serverless.yml (as the stack resolved it) names the
 * bearer authorizer unless it is public, and has exactly one scope: a route
 * added without either fails here, before it could ship open.
 */
type HttpApiEvent = { httpApi?: { method: string; path: string; authorizer?: { name?: string } } };

const definition = stackDefinition() as unknown as {
  functions: Record<string, { events?: HttpApiEvent[]; environment?: Record<string, string> }>;
  provider: {
    environment: Record<string, string>;
    httpApi?: {
      authorizers?: Record<
        string,
        { functionName: string; identitySource: string; resultTtlInSeconds: number; enableSimpleResponses: boolean }
      >;
    };
  };
};
const routes = Object.values(definition.functions).flatMap((fn) =>
  (fn.events ?? [])
    .filter((e) => e.httpApi)
    .map((e) => ({
      key: `${e.httpApi!.method.toUpperCase()} ${e.httpApi!.path}`,
      authorizer: e.httpApi!.authorizer?.name,
    })),
);

it('protects every route but the public ones: API routes with the bearer authorizer, UI routes with the session one', () => {
  expect(routes.length).toBeGreaterThan(PUBLIC_ROUTES.length);
  const expected = (key: string) =>
    PUBLIC_ROUTES.includes(key) ? undefined : SESSION_ROUTES.includes(key) ? 'session' : 'bearer';
  for (const route of routes) expect([route.key, route.authorizer]).toEqual([route.key, expected(route.key)]);
});

it('has a scope for exactly the protected routes', () => {
  const protectedKeys = routes
    .filter((r) => !PUBLIC_ROUTES.includes(r.key))
    .map((r) => r.key)
    .sort();
  expect(Object.keys(ROUTE_SCOPES).sort()).toEqual(protectedKeys);
});

it('configures the authorizer as the decision needs: no cache, policy responses, the Authorization header', () => {
  expect(definition.provider.httpApi?.authorizers?.bearer).toMatchObject({
    functionName: 'authorizer',
    identitySource: '$request.header.Authorization',
    resultTtlInSeconds: 0,
    enableSimpleResponses: false,
  });
  // No identity source: a browser without a cookie must still reach the page, which sends it to sign-in.
  expect(definition.provider.httpApi?.authorizers?.session).toEqual({
    type: 'request',
    functionName: 'authorizer',
    payloadVersion: '2.0',
    resultTtlInSeconds: 0,
    enableSimpleResponses: false,
  });
});

it('gives each secret only to the functions that need it (offline runs in one process and cannot show this)', () => {
  const holders = (variable: string) =>
    Object.entries(definition.functions)
      .filter(([, fn]) => fn.environment && variable in fn.environment)
      .map(([name]) => name)
      .sort();
  expect(holders('AUTH_TOKENS')).toEqual(['authorizer', 'webSignIn']);
  expect(holders('SESSION_KEYS')).toEqual(['authorizer', 'webSignIn']);
  expect(holders('SYNC_TOKEN_KEYS')).toEqual(['syncConnections', 'syncReseal', 'syncStep']);
  // The tick checks a token exists without opening it (issue 51): it holds no keyring.
  // webConsoleRetry: the Failures page's retry sends through the bot; the console's read pages (webConsole) hold
  // neither. Only the webhook, which checks it, holds the webhook secret (decision 234).
  expect(holders('TELEGRAM_BOT_TOKEN')).toEqual(['telegramNotify', 'telegramWebhook', 'webConsoleRetry']);
  expect(holders('TELEGRAM_WEBHOOK_SECRET')).toEqual(['telegramWebhook']);
  const shared = Object.keys(definition.provider.environment);
  expect(shared).not.toContain('TELEGRAM_BOT_TOKEN');
  expect(shared).toContain('NATS_URL');
  expect(shared).not.toContain('AUTH_TOKENS');
  expect(shared).not.toContain('SYNC_TOKEN_KEYS');
  expect(shared).not.toContain('SESSION_KEYS');
});
