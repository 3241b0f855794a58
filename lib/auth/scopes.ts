import type { Scope } from './tokens';

/**
 * The scope each HTTP route needs, by API Gateway route key, in ONE place.
 * HTTP APIs only attach scopes to JWT authorizers, so the Lambda authorizer
 * looks them up here; a route missing from this table is refused (fail
 * closed), and a test checks it against the routes of serverless.yml.
 */
export const ROUTE_SCOPES: Readonly<Record<string, Scope>> = {
  'POST /downloads': 'downloads:write',
  'GET /downloads': 'downloads:read',
  'GET /downloads/{id}': 'downloads:read',
  'POST /downloads/{id}/retry': 'downloads:write',
  'POST /downloads/{id}/state': 'downloads:write',
  'POST /downloads/{id}/infohashes': 'downloads:write',
  'POST /sync/connections': 'sync:admin',
  'GET /sync/{user}/hourly': 'sync:read',
  'GET /sync/attempts/{attempt}': 'sync:read',
  'GET /sync/{user}/operations': 'sync:read',
  'GET /telegram/failures': 'downloads:read',
};

/**
 * Routes without the bearer authorizer. `POST /telegram/webhook` is not open:
 * Telegram cannot send a bearer token, so its handler checks the webhook's
 * secret header (constant time) before reading anything.
 */
export const PUBLIC_ROUTES: readonly string[] = ['GET /healthcheck', 'POST /telegram/webhook'];
