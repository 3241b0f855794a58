import type { Scope } from './tokens';

/** A UI route any valid session may use, whatever its scopes (signing out; decision 330). */
export const ANY_SESSION = 'session' as const;
export type RouteScope = Scope | typeof ANY_SESSION;

/**
 * The scope each HTTP route needs, by API Gateway route key, in ONE place.
 * HTTP APIs only attach scopes to JWT authorizers, so the Lambda authorizer
 * looks them up here; a route missing from this table is refused (fail
 * closed), and a test checks it against the routes of serverless.yml.
 */
export const ROUTE_SCOPES: Readonly<Record<string, RouteScope>> = {
  'POST /downloads': 'downloads:write',
  'GET /downloads': 'downloads:read',
  'GET /downloads/{id}': 'downloads:read',
  'POST /downloads/{id}/retry': 'downloads:write',
  'POST /downloads/{id}/keep-waiting': 'downloads:write',
  'POST /downloads/{id}/state': 'downloads:write',
  'POST /downloads/{id}/infohashes': 'downloads:write',
  'POST /sync/connections': 'sync:admin',
  'DELETE /sync/connections/{user}': 'sync:admin',
  'GET /sync/{user}/hourly': 'sync:read',
  'GET /sync/attempts/{attempt}': 'sync:read',
  'GET /sync/{user}/operations': 'sync:read',
  'GET /sync/{user}/portfolio': 'sync:read',
  'GET /sync/{user}/calendar': 'sync:read',
  'GET /sync/{user}/exports/{dataset}': 'sync:read',
  // The calendar feed's tokens open a user's payments to anyone holding the URL: their management is an admin's.
  'POST /sync/{user}/feed-tokens': 'sync:admin',
  'GET /sync/{user}/feed-tokens': 'sync:admin',
  'DELETE /sync/{user}/feed-tokens/{token_id}': 'sync:admin',
  // The web UI (lib/web): the same scopes as the API routes it stands for, proven by a session cookie.
  'GET /': 'downloads:read',
  'GET /download/{id}': 'downloads:read',
  'GET /review/{id}': 'downloads:read',
  // The add form alone (where a refusal of POST /download is shown) and its post: POST /downloads' scope.
  'GET /download': 'downloads:write',
  'POST /download': 'downloads:write',
  'POST /download/{id}/retry': 'downloads:write',
  'POST /download/{id}/cancel': 'downloads:write',
  'POST /download/{id}/keep-waiting': 'downloads:write',
  'POST /download/{id}/infohashes': 'downloads:write',
  'POST /review/{id}': 'downloads:write',
  'POST /signout': ANY_SESSION,
  // The operator console (lib/web/console.ts): read scopes of its domains; a retry changes a delivery.
  'GET /scan': 'scan:read',
  'GET /scan/{job_id}': 'scan:read',
  'GET /scan/{job_id}/raw': 'scan:read',
  'GET /sync': 'sync:read',
  'GET /sync/{user}': 'sync:read',
  'GET /failures': 'downloads:read',
  'POST /failures/{id}/retry': 'downloads:write',
  'GET /telegram/failures': 'downloads:read',
  // Which dependency is down is an operator's to know, not a stranger's (GET /healthcheck is liveness only).
  'GET /healthcheck/deep': 'health:read',
};

/**
 * Routes authorized by the browser session cookie instead of a bearer token
 * (the `session` authorizer of serverless.yml). API routes never accept the
 * cookie: a cross-site request could otherwise ride on it.
 */
export const SESSION_ROUTES: readonly string[] = [
  'GET /',
  'GET /download/{id}',
  'GET /review/{id}',
  'GET /download',
  'POST /download',
  'POST /download/{id}/retry',
  'POST /download/{id}/cancel',
  'POST /download/{id}/keep-waiting',
  'POST /download/{id}/infohashes',
  'POST /review/{id}',
  'POST /signout',
  'GET /scan',
  'GET /scan/{job_id}',
  'GET /scan/{job_id}/raw',
  'GET /sync',
  'GET /sync/{user}',
  'GET /failures',
  'POST /failures/{id}/retry',
];

/**
 * Routes without an authorizer. `POST /telegram/webhook` is not open:
 * Telegram cannot send a bearer token, so its handler checks the webhook's
 * secret header (constant time) before reading anything. Nor can a calendar
 * app: `GET /sync/{user}/calendar.ics` checks its URL's feed token first.
 */
export const PUBLIC_ROUTES: readonly string[] = [
  'GET /healthcheck',
  'GET /signin',
  'POST /signin',
  'POST /telegram/webhook',
  // A calendar app cannot send a bearer token: the feed's handler checks the feed token of its URL (lib/sync/feed-tokens.ts).
  'GET /sync/{user}/calendar.ics',
  // The API's OpenAPI document: what the routes are, nothing of anyone's data (lib/http/openapi.ts).
  'GET /openapi.json',
];
