import { validator } from '../../lib/http/request';

export const parseConnection = validator<{ user_id: string; token: string }>({
  type: 'object',
  properties: {
    // A ULID in any case; a malformed id in a BODY is a 400 (only path ids answer 404).
    user_id: { type: 'string', pattern: '^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]{25}$' },
    token: { type: 'string', minLength: 1, maxLength: 4096 },
  },
  required: ['user_id', 'token'],
  additionalProperties: false,
});

export const parseOperationsQuery = validator<{ from?: string; to?: string }>({
  type: 'object',
  properties: {
    from: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
    to: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  },
  additionalProperties: false,
});
