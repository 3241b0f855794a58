import type { Operations } from '../http/openapi';

/** The Telegram routes for the OpenAPI document (lib/http/openapi.ts). */
export const telegramOperations: Operations = {
  'POST /telegram/webhook': {
    tag: 'telegram',
    summary: 'Telegram’s updates (X-Telegram-Bot-Api-Secret-Token is the proof)',
    responses: {
      '200': { description: 'taken', json: { type: 'object', required: ['ok'], properties: { ok: { const: true } } } },
    },
  },
  'GET /telegram/failures': {
    tag: 'telegram',
    summary: 'Deliveries that failed',
    responses: {
      '200': {
        description: 'newest first',
        json: {
          type: 'object',
          required: ['items'],
          properties: { items: { type: 'array', items: { type: 'object' } } },
        },
      },
    },
  },
};
