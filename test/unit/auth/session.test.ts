import { authorize, authorizeSession } from '../../../lib/auth/authorize';
import { gatewayAnswer } from '../../../lib/auth/gateway';
import { checkSession, clearedSessionCookie, issueSession, readCookie, sessionCookie } from '../../../lib/auth/session';
import { newToken, TokenGrant, tokenHash } from '../../../lib/auth/tokens';
import { newKeyringEntry, parseKeyring } from '../../../lib/secrets/sealer';

const keyring = parseKeyring(`${newKeyringEntry('new')},${newKeyringEntry('old')}`).keyring!;
const grant: TokenGrant = { name: 'ops', sha256: 'a1'.repeat(32), scopes: ['downloads:read'] };
const now = Date.parse('2026-12-03T06:00:00Z');

describe('session cookies', () => {
  it('open under the keyring and the current grant', () => {
    const { value, session } = issueSession(keyring, grant, now);
    expect(checkSession(keyring, [grant], value, now + 1000)).toEqual({ ok: true, session, grant });
  });

  it.each([
    ['expired', (v: string) => v, now + 8 * 3600_000 + 1, [grant]],
    ['revoked: token removed', (v: string) => v, now, []],
    ['revoked: token re-issued under the same name', (v: string) => v, now, [{ ...grant, sha256: 'b2'.repeat(32) }]],
    ['forged: a flipped MAC', (v: string) => v.slice(0, -2) + (v.endsWith('AA') ? 'AB' : 'AA'), now, [grant]],
    [
      'forged: another payload under the same MAC',
      (v: string) =>
        v.replace(
          /\.[^.]+\./,
          `.${Buffer.from('{"sub":"ops","gh":"a1a1a1a1a1a1a1a1","exp":9999999999,"csrf":"x"}').toString('base64url')}.`,
        ),
      now,
      [grant],
    ],
    ['malformed', () => 'v1.new.!!.x', now, [grant]],
  ])('refuses a session that is %s', (_name, edit, at, grants) => {
    const check = checkSession(
      keyring,
      grants as TokenGrant[],
      edit(issueSession(keyring, grant, now).value),
      at as number,
    );
    expect(check.ok).toBe(false);
  });

  it('never outlives its token', () => {
    const short = { ...grant, expiresAt: now + 60_000 };
    const { value, maxAge } = issueSession(keyring, short, now);
    expect(maxAge).toBe(60);
    expect(checkSession(keyring, [short], value, now + 61_000)).toEqual({ ok: false, reason: 'expired' });
  });

  it('sets HttpOnly, SameSite=Strict and, off loopback, Secure with the __Host- prefix', () => {
    expect(sessionCookie('v', 10, '127.0.0.1:3000')).toBe(
      'tss_session=v; Path=/; Max-Age=10; HttpOnly; SameSite=Strict',
    );
    expect(sessionCookie('v', 10, 'ui.example.com')).toBe(
      '__Host-tss_session=v; Path=/; Max-Age=10; HttpOnly; SameSite=Strict; Secure',
    );
    expect(sessionCookie('v', 10, undefined)).toMatch(/^__Host-tss_session=v; .*; Secure$/);
    expect(clearedSessionCookie('localhost:3000')).toMatch(/^tss_session=; .*Max-Age=0/);
    expect(clearedSessionCookie('ui.example.com')).toMatch(/^__Host-tss_session=; Path=\/; Max-Age=0; .*; Secure$/);
  });

  it('reads a cookie from a header or a list, first one wins', () => {
    expect(readCookie('a=1; tss_session=x; tss_session=y', 'tss_session')).toBe('x');
    expect(readCookie(['a=1', 'tss_session=z'], 'tss_session')).toBe('z');
    expect(readCookie(undefined, 'tss_session')).toBeUndefined();
  });
});

describe('the session cookie by host', () => {
  const value = () => issueSession(keyring, grant, now).value;
  it('off loopback reads only the __Host- cookie: a plain one (planted by a sibling host or over http) is no session', () => {
    const host = 'tss.example.com';
    expect(authorizeSession([grant], keyring, `__Host-tss_session=${value()}`, 'GET /', now, host)).toMatchObject({
      effect: 'allow',
    });
    expect(authorizeSession([grant], keyring, `tss_session=${value()}`, 'GET /', now, host)).toEqual({
      effect: 'anonymous',
      reason: 'missing',
    });
    expect(authorizeSession([grant], keyring, [`tss_session=${value()}`], 'GET /', now, undefined)).toMatchObject({
      effect: 'anonymous',
    });
  });
  it('on a loopback host reads the plain name only', () => {
    for (const host of ['127.0.0.1:3000', 'localhost', '[::1]:3000']) {
      expect(authorizeSession([grant], keyring, `tss_session=${value()}`, 'GET /', now, host).effect).toBe('allow');
      expect(authorizeSession([grant], keyring, `__Host-tss_session=${value()}`, 'GET /', now, host).effect).toBe(
        'anonymous',
      );
    }
  });
});

describe('authorizeSession', () => {
  // The stack's host: the cookie's loopback name.
  const LOCAL = '127.0.0.1:3000';
  const cookie = (g: TokenGrant) => `tss_session=${issueSession(keyring, g, now).value}`;
  it('allows a UI route with the scope, forbids without, and is anonymous without a session', () => {
    expect(authorizeSession([grant], keyring, cookie(grant), 'GET /', now, LOCAL)).toMatchObject({
      effect: 'allow',
      principal: 'ops',
      scope: 'downloads:read',
    });
    expect(authorizeSession([grant], keyring, cookie(grant), 'POST /download/{id}/retry', now, LOCAL)).toMatchObject({
      effect: 'forbidden',
      reason: 'scope',
    });
    expect(authorizeSession([grant], keyring, undefined, 'GET /', now, LOCAL)).toEqual({
      effect: 'anonymous',
      reason: 'missing',
    });
  });
  it('a GET page the scopes do not open is let through only to say 403 (marked); a POST is denied outright', () => {
    const scanOnly: TokenGrant = { name: 'scanner', sha256: 'c3'.repeat(32), scopes: ['scan:read'] };
    const page = authorizeSession([scanOnly], keyring, cookie(scanOnly), 'GET /sync', now, LOCAL);
    expect(page).toMatchObject({ effect: 'page-forbidden', principal: 'scanner', scope: 'sync:read' });
    const answer = gatewayAnswer(page, 'arn:route', 'GET /sync');
    expect(answer.context).toMatchObject({ principal: 'scanner', scope: '', scopes: 'scan:read', denied: 'sync:read' });
    expect(
      authorizeSession([scanOnly], keyring, cookie(scanOnly), 'POST /failures/{id}/retry', now, LOCAL),
    ).toMatchObject({
      effect: 'forbidden',
    });
    expect(
      gatewayAnswer(
        authorizeSession([scanOnly], keyring, cookie(scanOnly), 'POST /failures/{id}/retry', now, LOCAL),
        'arn:route',
        'POST /failures/{id}/retry',
      ).policyDocument.Statement[0],
    ).toMatchObject({ Effect: 'Deny' });
  });
  it('any session may sign out, whatever its scopes; a bearer token never can', () => {
    const token = newToken();
    const syncOnly: TokenGrant = { name: 'syncer', sha256: tokenHash(token), scopes: ['sync:read'] };
    expect(authorizeSession([syncOnly], keyring, cookie(syncOnly), 'POST /signout', now, LOCAL)).toMatchObject({
      effect: 'allow',
    });
    expect(authorize([syncOnly], `Bearer ${token}`, 'POST /signout', now)).toMatchObject({ effect: 'forbidden' });
    expect(authorize([syncOnly], `Bearer ${token}`, 'GET /sync/{user}/hourly', now)).toMatchObject({ effect: 'allow' });
  });
  it('never takes a cookie on an API route', () => {
    expect(authorizeSession([grant], keyring, cookie(grant), 'GET /downloads', now, LOCAL).effect).toBe(
      'unauthenticated',
    );
  });
});
