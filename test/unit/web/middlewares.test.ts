import type { APIGatewayProxyEventV2, Context } from 'aws-lambda';
import { createLogger } from '../../../lib/log';
import { webHandler, type WebRequest } from '../../../lib/web/handler';
import { csrfOnPost, OVERRIDE_HEADER, sessionOrSignIn, webState } from '../../../lib/web/middlewares';

/** The UI's middlewares in the real chain, over hand-made payload 2.0 events. */
const log = createLogger({}, { write: () => undefined });
const context = { awsRequestId: 'r-1' } as Context;

function event(
  method: 'GET' | 'POST',
  path: string,
  opts: { headers?: Record<string, string>; body?: string; session?: { principal: string; csrf: string } } = {},
) {
  return {
    routeKey: `${method} ${path}`,
    rawPath: path,
    headers: {
      host: 'ui.test',
      ...(method === 'POST' ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      ...opts.headers,
    },
    body: opts.body,
    isBase64Encoded: false,
    requestContext: {
      http: { method },
      authorizer: opts.session
        ? {
            lambda: {
              principal: opts.session.principal,
              scopes: 'downloads:read downloads:write',
              csrf: opts.session.csrf,
            },
          }
        : undefined,
    },
  } as unknown as APIGatewayProxyEventV2;
}

const seen: WebRequest[] = [];
const handler = webHandler(log, async (request) => {
  seen.push(request);
  return { page: { title: 'ok', body: `<p>${request.viewer?.principal ?? 'anon'}</p>` } as never };
});
const session = { principal: 'ops', csrf: 'c'.repeat(32) };

describe('web middlewares', () => {
  beforeEach(() => (seen.length = 0));

  it('a page with a session runs with its viewer, a CSP nonce and no form', async () => {
    const answer = await handler(event('GET', '/', { session }), context);
    expect(answer.statusCode).toBe(200);
    expect(seen[0].viewer).toMatchObject({ principal: 'ops', canWrite: true });
    expect(answer.headers['content-security-policy']).toContain(`'nonce-${seen[0].nonce}'`);
    expect(seen[0].form).toEqual({});
  });

  it('without a session: sign-in with the page to come back to, the page never runs', async () => {
    const answer = await handler(event('GET', '/download/01ARZ3NDEKTSV4RRFFQ69G5FAV'), context);
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/signin?next=%2Fdownload%2F01ARZ3NDEKTSV4RRFFQ69G5FAV');
    expect(seen).toHaveLength(0);
  });

  it('a next that is not a page of ours is dropped', async () => {
    const answer = await handler(event('GET', '//evil.test/x'), context);
    expect(answer.headers.location).toBe('/signin');
  });

  it('refuses the offline authorizer-override header, even with a session', async () => {
    const answer = await handler(event('GET', '/', { session, headers: { [OVERRIDE_HEADER]: '{}' } }), context);
    expect(answer.statusCode).toBe(400);
    expect(seen).toHaveLength(0);
  });

  it('a POST from another site is refused before the session or the form is read', async () => {
    const body = `csrf=${session.csrf}&x=1`;
    for (const headers of [
      { origin: 'https://evil.test' },
      { origin: 'null' },
      { 'sec-fetch-site': 'cross-site' },
    ] as Record<string, string>[]) {
      const answer = await handler(event('POST', '/', { session, headers, body }), context);
      expect(answer.statusCode).toBe(403);
    }
    expect(seen).toHaveLength(0);
  });

  it('a POST needs the session form token; the token is removed from the fields', async () => {
    const wrong = await handler(event('POST', '/', { session, body: `csrf=${'d'.repeat(32)}&x=1` }), context);
    expect(wrong.statusCode).toBe(403);
    const missing = await handler(event('POST', '/', { session, body: 'x=1' }), context);
    expect(missing.statusCode).toBe(403);
    const ok = await handler(event('POST', '/', { session, body: `csrf=${session.csrf}&x=1` }), context);
    expect(ok.statusCode).toBe(200);
    expect(seen.map((r) => r.form)).toEqual([{ x: '1' }]);
  });

  it('a thrown page error is rendered as a page with the mapped status', async () => {
    const failing = webHandler(log, async () => {
      throw new Error('secret detail');
    });
    const answer = await failing(event('GET', '/', { session }), context);
    expect(answer.statusCode).toBe(500);
    expect(answer.headers['content-type']).toContain('text/html');
    expect(answer.body).not.toContain('secret detail');
  });

  it('keeps each invocation’s state apart when they run side by side', async () => {
    const a = event('POST', '/', { session, body: `csrf=${session.csrf}&who=a` });
    const b = event('POST', '/', {
      session: { principal: 'bob', csrf: 'e'.repeat(32) },
      body: `csrf=${'e'.repeat(32)}&who=b`,
    });
    await Promise.all([handler(a, context), handler(b, context)]);
    expect(seen.map((r) => `${r.viewer?.principal}:${r.form.who}`).sort()).toEqual(['bob:b', 'ops:a']);
    expect(webState(a).form).toEqual({ who: 'a' });
  });

  it('each middleware is a named plain object', () => {
    expect(sessionOrSignIn().name).toBe('sessionOrSignIn');
    expect(csrfOnPost().name).toBe('csrfOnPost');
  });
});
