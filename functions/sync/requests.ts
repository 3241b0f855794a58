import { validator } from '../../lib/http/request';

export const parseConnection = validator<{ user_id: string; token: string }>({
  type: 'object',
  properties: {
    user_id: { type: 'string', minLength: 26, maxLength: 26 },
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
