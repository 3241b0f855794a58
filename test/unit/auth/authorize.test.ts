import { authorize } from '../../../lib/auth/authorize';
import { gatewayAnswer, routeResource } from '../../../lib/auth/gateway';
import { matches } from '../../../tools/deploy/policy-eval';
import { UnauthorizedError } from '../../../lib/auth/errors';
import { grantJson, newToken, parseTokenGrants, SCOPES, tokenHash } from '../../../lib/auth/tokens';
import { ConfigError } from '../../../lib/config';
import { loadAuthConfig } from '../../../lib/auth/config';

const NOW = Date.parse('2026-12-02T12:00:00Z');
const all = newToken();
const reader = newToken();
const expired = newToken();
const { grants } = parseTokenGrants(
  JSON.stringify([
    grantJson('all', all, SCOPES),
    grantJson('reader', reader, ['downloads:read']),
    grantJson('old', expired, SCOPES, NOW - 1),
  ]),
);

describe('authorize', () => {
  it('allows a known token on a route its scopes cover, naming the principal', () => {
    expect(authorize(grants, `Bearer ${all}`, 'POST /downloads', NOW)).toEqual({
      effect: 'allow',
      principal: 'all',
      scope: 'downloads:write',
    });
    expect(authorize(grants, `bearer ${reader}`, 'GET /downloads/{id}', NOW)).toMatchObject({
      effect: 'allow',
      principal: 'reader',
    });
  });

  it.each([
    ['no header', undefined, 'missing'],
    ['empty header', '', 'missing'],
    ['another scheme', `Basic ${all}`, 'malformed'],
    ['no scheme', all, 'malformed'],
    ['a short token', 'Bearer abc', 'malformed'],
    ['a token with a space', `Bearer ${all.slice(0, 20)} ${all.slice(20)}`, 'malformed'],
    ['an oversize token', `Bearer ${'a'.repeat(10_000)}`, 'malformed'],
    ['an unknown token', `Bearer ${newToken()}`, 'unknown'],
    [
      'a token differing in its last character',
      `Bearer ${all.slice(0, -1)}${all.endsWith('A') ? 'B' : 'A'}`,
      'unknown',
    ],
    ['the stored hash instead of the token', `Bearer ${tokenHash(all)}`, 'unknown'],
  ])('refuses %s as unauthenticated', (_label, header, reason) => {
    expect(authorize(grants, header, 'GET /downloads', NOW)).toEqual({ effect: 'unauthenticated', reason });
  });

  it('refuses an expired token as unauthenticated from its expiry on', () => {
    expect(authorize(grants, `Bearer ${expired}`, 'GET /downloads', NOW)).toEqual({
      effect: 'unauthenticated',
      reason: 'expired',
      principal: 'old',
    });
    expect(authorize(grants, `Bearer ${expired}`, 'GET /downloads', NOW - 2)).toMatchObject({ effect: 'allow' });
  });

  it('forbids a good token without the route scope, and any route missing from the scope table', () => {
    expect(authorize(grants, `Bearer ${reader}`, 'POST /downloads', NOW)).toEqual({
      effect: 'forbidden',
      reason: 'scope',
      principal: 'reader',
      scope: 'downloads:write',
    });
    expect(authorize(grants, `Bearer ${reader}`, 'GET /sync/{user}/hourly', NOW)).toMatchObject({
      effect: 'forbidden',
      reason: 'scope',
    });
    expect(authorize(grants, `Bearer ${all}`, 'DELETE /downloads', NOW)).toMatchObject({
      effect: 'forbidden',
      reason: 'unknown-route',
    });
  });
});

describe('gatewayAnswer', () => {
  const arn = 'arn:aws:execute-api:us-east-1:1:api/$default/GET/downloads';

  it('throws Unauthorized (→ 401) for an unauthenticated caller', () => {
    expect(() => gatewayAnswer({ effect: 'unauthenticated', reason: 'unknown' }, arn, 'GET /downloads')).toThrow(
      UnauthorizedError,
    );
    expect(() => gatewayAnswer({ effect: 'unauthenticated', reason: 'unknown' }, arn, 'GET /downloads')).toThrow(
      /^Unauthorized$/,
    );
  });

  it('answers Allow or Deny (→ 403) on the route ARN, with the principal but never the token', () => {
    const allow = gatewayAnswer({ effect: 'allow', principal: 'all', scope: 'downloads:read' }, arn, 'GET /downloads');
    expect(allow.policyDocument.Statement).toEqual([{ Action: 'execute-api:Invoke', Effect: 'Allow', Resource: arn }]);
    expect(allow.context).toEqual({ principal: 'all', scope: 'downloads:read' });
    const deny = gatewayAnswer(
      { effect: 'forbidden', reason: 'scope', principal: 'reader', scope: 'downloads:write' },
      arn,
      'GET /downloads',
    );
    expect(deny.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny', Resource: arn });
  });
});

describe('the cached answer (on AWS: by token and route key, AUTHORIZER_CACHE_SECONDS)', () => {
  const stage = 'arn:aws:execute-api:eu-west-1:123456789012:a1b2c3d4e5/$default';
  /** What API Gateway does with a cached policy: match its Resource against the later request's ARN. */
  const allows = (answer: ReturnType<typeof gatewayAnswer>, requestArn: string) =>
    answer.policyDocument.Statement.some(
      (st) =>
        'Resource' in st &&
        [st.Resource].flat().some((resource) => matches(String(resource), requestArn)) &&
        st.Effect === 'Allow',
    );

  it('allows the second id of the route the first request was decided for, and no other route', () => {
    const first = gatewayAnswer(
      { effect: 'allow', principal: 'ops', scope: 'downloads:read' },
      `${stage}/GET/downloads/01KB0000000000000000000001`,
      'GET /downloads/{id}',
    );
    expect(first.policyDocument.Statement[0]).toMatchObject({ Resource: `${stage}/GET/downloads/*` });
    expect(allows(first, `${stage}/GET/downloads/01KB0000000000000000000001`)).toBe(true);
    expect(allows(first, `${stage}/GET/downloads/01KB0000000000000000000002`)).toBe(true);
    // Another method, another API or stage: not this policy's.
    expect(allows(first, `${stage}/POST/downloads/01KB0000000000000000000002/retry`)).toBe(false);
    expect(allows(first, `${stage}/GET/downloads`)).toBe(false);
    expect(allows(first, 'arn:aws:execute-api:eu-west-1:123456789012:other/$default/GET/downloads/x')).toBe(false);
  });

  it('widens every parameter of a route key, and a Deny as much (a missing scope is the route’s)', () => {
    const deny = gatewayAnswer(
      { effect: 'forbidden', reason: 'scope', principal: 'reader', scope: 'sync:read' },
      `${stage}/GET/sync/01KB0000000000000000000001/hourly`,
      'GET /sync/{user}/hourly',
    );
    expect(deny.policyDocument.Statement[0]).toMatchObject({ Effect: 'Deny', Resource: `${stage}/GET/sync/*/hourly` });
    expect(matches(`${stage}/GET/sync/*/hourly`, `${stage}/GET/sync/01KB0000000000000000000002/hourly`)).toBe(true);
    expect(routeResource(`${stage}/GET/downloads`, 'GET /downloads')).toBe(`${stage}/GET/downloads`);
    expect(routeResource(`${stage}/GET/x/a/b`, 'GET /x/{proxy+}')).toBe(`${stage}/GET/x/*`);
    // Anything else is answered for the request alone, as before.
    expect(routeResource('arn:route', 'GET /x')).toBe('arn:route');
    expect(routeResource(`${stage}/GET/x`, '$default')).toBe(`${stage}/GET/x`);
  });
});

describe('AUTH_TOKENS', () => {
  it('loads grants made by grantJson, keeping only hashes', () => {
    const text = JSON.stringify([grantJson('ops', all, ['sync:read'], Date.parse('2027-01-01T00:00:00Z'))]);
    expect(text).not.toContain(all);
    expect(loadAuthConfig({ AUTH_TOKENS: text }).grants).toEqual([
      { name: 'ops', sha256: tokenHash(all), scopes: ['sync:read'], expiresAt: Date.parse('2027-01-01T00:00:00Z') },
    ]);
  });

  it.each([
    ['unset', undefined, /AUTH_TOKENS is required/],
    ['not JSON', '{', /JSON array/],
    ['an object', '{}', /JSON array/],
    ['a plain-text token', JSON.stringify([{ name: 'x', sha256: all, scopes: ['sync:read'] }]), /64 lowercase hex/],
    ['an unknown scope', JSON.stringify([{ name: 'x', sha256: tokenHash(all), scopes: ['root'] }]), /scopes/],
    ['no scopes', JSON.stringify([{ name: 'x', sha256: tokenHash(all), scopes: [] }]), /scopes/],
    [
      'a bad date',
      JSON.stringify([{ name: 'x', sha256: tokenHash(all), scopes: ['sync:read'], expires_at: 'soon' }]),
      /expires_at/,
    ],
    [
      'an unknown field',
      JSON.stringify([{ name: 'x', sha256: tokenHash(all), scopes: ['sync:read'], token: all }]),
      /unknown field/,
    ],
    [
      'a repeated hash',
      JSON.stringify([grantJson('a', all, ['sync:read']), grantJson('b', all, ['sync:admin'])]),
      /repeats/,
    ],
  ])('refuses %s with a ConfigError naming AUTH_TOKENS', (_label, value, message) => {
    const load = () => loadAuthConfig({ AUTH_TOKENS: value });
    expect(load).toThrow(ConfigError);
    expect(load).toThrow(message);
  });

  it.each([
    ['a local time (read in the zone of whatever container loads it)', '2027-01-01T00:00:00'],
    ['an offset', '2027-01-01T03:00:00+03:00'],
    ['a day that does not exist', '2027-02-30T00:00:00Z'],
    ['epoch ms', 1798761600000],
  ])('refuses an expires_at that is %s: only ISO-8601 UTC', (_label, expires_at) => {
    const text = JSON.stringify([{ name: 'x', sha256: tokenHash(all), scopes: ['sync:read'], expires_at }]);
    expect(() => loadAuthConfig({ AUTH_TOKENS: text })).toThrow(/entry 0 has an expires_at .*ISO-8601 UTC/);
  });
});

describe('gatewayAnswer on UI routes', () => {
  const arn = 'arn:aws:execute-api:us-east-1:1:api/$default/GET/';
  it('lets an anonymous browser through with an EMPTY principal (the page redirects it), and gives a session its scopes and form token', () => {
    const anonymous = gatewayAnswer({ effect: 'anonymous', reason: 'expired' }, arn, 'GET /');
    expect(anonymous.policyDocument.Statement[0]).toMatchObject({ Effect: 'Allow' });
    expect(anonymous.context).toEqual({ principal: '', scope: '', scopes: '', csrf: '' });
    const allow = gatewayAnswer(
      {
        effect: 'allow',
        principal: 'ops',
        scope: 'downloads:read',
        scopes: ['downloads:read', 'downloads:write'],
        csrf: 'n0nce',
      },
      arn,
      'GET /',
    );
    expect(allow.context).toEqual({
      principal: 'ops',
      scope: 'downloads:read',
      scopes: 'downloads:read downloads:write',
      csrf: 'n0nce',
    });
  });
});
