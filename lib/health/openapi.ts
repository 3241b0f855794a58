import type { Operations } from '../http/openapi';

/** The health routes for the OpenAPI document (lib/http/openapi.ts); the shapes of check.ts and the handler. */
const liveness = {
  type: 'object',
  required: ['status', 'version', 'uptime_s'],
  additionalProperties: false,
  properties: { status: { const: 'ok' }, version: { type: 'string' }, uptime_s: { type: 'integer', minimum: 0 } },
};

export const healthOperations: Operations = {
  'GET /healthcheck': {
    tag: 'health',
    summary: 'Liveness: tells nothing of the dependencies',
    responses: { '200': { description: 'alive', json: liveness } },
  },
  'GET /healthcheck/deep': {
    tag: 'health',
    summary: 'Every dependency probed',
    responses: {
      '200': {
        description: 'the report (status degraded when a check is down)',
        json: {
          type: 'object',
          required: ['status', 'version', 'uptime_s', 'checks'],
          additionalProperties: false,
          properties: {
            status: { enum: ['ok', 'degraded'] },
            version: { type: 'string' },
            uptime_s: { type: 'integer', minimum: 0 },
            checks: { type: 'object', additionalProperties: { type: 'string' } },
            details: { type: 'object', additionalProperties: { type: 'string' } },
          },
        },
      },
    },
  },
};
