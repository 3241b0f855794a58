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
  opts: {
    headers?: Record<string, string>;
    body?: string;
    session?: { principal: string; csrf: string; scopes?: string; denied?: string };
    query?: Record<string, string>;
  } = {},
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
    queryStringParameters: opts.query,
    isBase64Encoded: false,
    requestContext: {
      http: { method },
      authorizer: opts.session
        ? {
            lambda: {
              principal: opts.session.principal,
              scopes: opts.session.scopes ?? 'downloads:read downloads:write',
              csrf: opts.session.csrf,
              denied: opts.session.denied,
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

  it('every answer, a page, a redirect, a refusal or an error page, carries HSTS and the other security headers', async () => {
    const failing = webHandler(log, async () => {
      throw new Error('x');
    });
    const answers = [
      await handler(event('GET', '/', { session }), context),
      await handler(event('GET', '/download/01ARZ3NDEKTSV4RRFFQ69G5FAV'), context),
      await handler(event('GET', '/', { session, headers: { [OVERRIDE_HEADER]: '{}' } }), context),
      await handler(
        event('POST', '/signout', { session, headers: { origin: 'https://evil.test' }, body: 'x=1' }),
        context,
      ),
      await failing(event('GET', '/', { session }), context),
    ];
    expect(answers.map((a) => a.statusCode)).toEqual([200, 303, 400, 403, 500]);
    for (const answer of answers)
      expect(answer.headers).toMatchObject({
        'strict-transport-security': 'max-age=31536000',
        'x-content-type-options': 'nosniff',
        'cache-control': 'no-store',
      });
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
      const answer = await handler(event('POST', '/signout', { session, headers, body }), context);
      expect(answer.statusCode).toBe(403);
    }
    expect(seen).toHaveLength(0);
  });

  it('a POST needs the session form token; the token is removed from the fields', async () => {
    const wrong = await handler(event('POST', '/signout', { session, body: `csrf=${'d'.repeat(32)}&x=1` }), context);
    expect(wrong.statusCode).toBe(403);
    const missing = await handler(event('POST', '/signout', { session, body: 'x=1' }), context);
    expect(missing.statusCode).toBe(403);
    const ok = await handler(event('POST', '/signout', { session, body: `csrf=${session.csrf}&x=1` }), context);
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
    const a = event('POST', '/signout', { session, body: `csrf=${session.csrf}&who=a` });
    const b = event('POST', '/signout', {
      session: { principal: 'bob', csrf: 'e'.repeat(32) },
      body: `csrf=${'e'.repeat(32)}&who=b`,
    });
    await Promise.all([handler(a, context), handler(b, context)]);
    expect(seen.map((r) => `${r.viewer?.principal}:${r.form.who}`).sort()).toEqual(['bob:b', 'ops:a']);
    expect(webState(a).form).toEqual({ who: 'a' });
  });

  it('a session on a page its scopes do not open gets a 403 page in its language; the page never runs', async () => {
    const scanOnly = { principal: 'scanner', csrf: 'c'.repeat(32), scopes: 'scan:read' };
    const sync = await handler(
      event('GET', '/sync', { session: { ...scanOnly, denied: 'sync:read' }, headers: { 'accept-language': 'ru-RU' } }),
      context,
    );
    expect(sync.statusCode).toBe(403);
    expect(sync.body).toContain('<html lang="ru">');
    expect(sync.body).toContain('Этой странице нужно право sync:read');
    expect(sync.body).toContain('href="/scan"');
    expect(sync.body).not.toContain('href="/sync"');
    // Without the authorizer's mark the scope is checked again here, from the same table.
    const failures = await handler(event('GET', '/failures', { session: scanOnly }), context);
    expect(failures.statusCode).toBe(403);
    expect(failures.body).toContain('This page needs the downloads:read scope');
    expect(seen).toHaveLength(0);
  });

  it('/ sends a scan-only or sync-only session to its own start page', async () => {
    const home = (scopes: string) =>
      handler(event('GET', '/', { session: { principal: 'p', csrf: 'c'.repeat(32), scopes } }), context);
    expect((await home('scan:read')).headers.location).toBe('/scan');
    expect((await home('sync:read health:read')).headers.location).toBe('/sync');
    expect(seen).toHaveLength(0);
  });

  it('?lang= chooses the language, keeps it in a cookie, and is taken out of the query the page sees', async () => {
    const answer = await handler(
      event('GET', '/', { session, query: { lang: 'ru', q: 'x' }, headers: { 'accept-language': 'en' } }),
      context,
    );
    expect(answer.statusCode).toBe(200);
    expect(seen[0].ui.lang).toBe('ru');
    expect(seen[0].event.queryStringParameters).toEqual({ q: 'x' });
    expect(answer.cookies).toEqual([
      expect.stringMatching(/^lang=ru; Path=\/; Max-Age=\d+; HttpOnly; SameSite=Lax; Secure$/),
    ]);
    // The cookie then decides over the browser's language; the link back to English keeps the page's query.
    const again = await handler(
      event('GET', '/', { session, headers: { cookie: 'lang=ru', 'accept-language': 'en' } }),
      context,
    );
    expect(again.body).toContain('<html lang="ru">');
    expect(again.body).toContain('href="/?lang=en"');
    expect(answer.body).toContain('href="/?q=x&amp;lang=en"');
  });

  it('a language we do not ship is a 400 page, and the page never runs', async () => {
    const answer = await handler(event('GET', '/', { session, query: { lang: 'de' } }), context);
    expect(answer.statusCode).toBe(400);
    expect(answer.body).toContain('lang must be one of ru, en');
    expect(seen).toHaveLength(0);
  });

  it('each middleware is a named plain object', () => {
    expect(sessionOrSignIn().name).toBe('sessionOrSignIn');
    expect(csrfOnPost().name).toBe('csrfOnPost');
  });
});
