import type { Operations } from '../http/openapi';

/**
 * The sync API's operations for the OpenAPI document (lib/http/openapi.ts). Their answers are described in
 * docs/sync.md; here as JSON objects (their schemas are not yet carried over: decision 404).
 */
const object = { type: 'object' };
const ok = (description: string) => ({ '200': { description, json: object } });
const get = (summary: string, description = 'the answer (docs/sync.md)') => ({
  tag: 'sync',
  summary,
  responses: ok(description),
});

export const syncOperations: Operations = {
  'POST /sync/connections': {
    tag: 'sync',
    summary: 'Save a user’s brokerage token (never returned)',
    requestBody: {
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            required: ['user_id', 'token'],
            additionalProperties: false,
            properties: { user_id: { type: 'string' }, token: { type: 'string' } },
          },
        },
      },
    },
    responses: { '201': { description: '{user_id, created_at}', json: object } },
  },
  'DELETE /sync/connections/{user}': { tag: 'sync', summary: 'Remove a user’s connection', responses: ok('removed') },
  'GET /sync/{user}/hourly': get('The last hourly sync of a user'),
  'GET /sync/attempts/{attempt}': get('One sync attempt'),
  'GET /sync/{user}/operations': get('A user’s operations (from, to)'),
  'GET /sync/{user}/portfolio': get('A user’s holdings'),
  'GET /sync/{user}/calendar': get('A user’s expected payments (from, to)'),
  'GET /sync/{user}/exports/{dataset}': {
    tag: 'sync',
    summary: 'A dataset as CSV',
    responses: { '200': { description: 'CSV (text/csv)' } },
  },
  'POST /sync/{user}/feed-tokens': {
    tag: 'sync',
    summary: 'A new calendar feed token',
    responses: { '201': { description: '{…, token, feed_path}', json: object } },
  },
  'GET /sync/{user}/feed-tokens': get('A user’s feed tokens'),
  'DELETE /sync/{user}/feed-tokens/{token_id}': {
    tag: 'sync',
    summary: 'Revoke a feed token',
    responses: ok('revoked'),
  },
  'GET /sync/{user}/calendar.ics': {
    tag: 'sync',
    summary: 'The calendar feed (its URL’s token is the proof)',
    responses: { '200': { description: 'iCalendar', calendar: true } },
  },
};
