import type { Operations } from '../http/openapi';
import { COMPONENTS } from './check';

/** The health routes for the OpenAPI document (lib/http/openapi.ts); the shapes of check.ts, last-known.ts and the handler. */
const components = [...COMPONENTS];

export const healthOperations: Operations = {
  'GET /healthcheck': {
    tag: 'health',
    summary: "Each component's last known state, measured at most every 10 s per container; never why (decision 367)",
    responses: {
      '200': {
        description: 'always 200: degraded when a component is down, unknown before the first measurement',
        json: {
          type: 'object',
          required: ['status', 'version', 'uptime_s', 'checks', 'checked_s_ago'],
          additionalProperties: false,
          properties: {
            status: { enum: ['ok', 'degraded', 'unknown'] },
            version: { type: 'string' },
            uptime_s: { type: 'integer', minimum: 0 },
            checks: {
              type: 'object',
              required: components,
              additionalProperties: false,
              properties: Object.fromEntries(components.map((c) => [c, { enum: ['ok', 'down', 'unknown'] }])),
            },
            checked_s_ago: { type: ['integer', 'null'], minimum: 0 },
          },
        },
      },
    },
  },
  'GET /healthcheck/deep': {
    tag: 'health',
    summary: 'Every dependency probed now',
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
            checks: { type: 'object', additionalProperties: { enum: ['ok', 'down'] } },
            details: { type: 'object', additionalProperties: { type: 'string' } },
            hotfolder_wake: {
              type: 'object',
              required: ['mode', 'recorded_s_ago'],
              additionalProperties: false,
              properties: { mode: { enum: ['notify', 'poll'] }, recorded_s_ago: { type: 'integer', minimum: 0 } },
            },
            disk_space: {
              type: 'object',
              required: ['free_bytes', 'reserve_bytes', 'needed_bytes', 'held', 'recorded_s_ago'],
              additionalProperties: false,
              properties: Object.fromEntries(
                ['free_bytes', 'reserve_bytes', 'needed_bytes', 'held', 'recorded_s_ago'].map((k) => [
                  k,
                  { type: 'integer', minimum: 0 },
                ]),
              ),
            },
          },
        },
      },
    },
  },
};
