import { ErrorCode, HttpError } from '../http/errors';
import { validator } from '../http/request';

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

const parseOperationsDates = validator<{ from?: string; to?: string }>({
  type: 'object',
  properties: {
    from: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
    to: { type: 'string', pattern: '^\\d{4}-\\d{2}-\\d{2}$' },
  },
  additionalProperties: false,
});

const DAY = 24 * 3600_000;

/** The operations query as an ISO range [from, to): both days included, `from` after `to` is a 400. */
export function parseOperationsQuery(query: Record<string, string | undefined>): { from: string; to: string } {
  const q = parseOperationsDates(query);
  const from = q.from ? Date.parse(`${q.from}T00:00:00Z`) : Date.UTC(1970, 0, 1);
  const to = q.to ? Date.parse(`${q.to}T00:00:00Z`) + DAY : Date.UTC(9999, 0, 1);
  if (Number.isNaN(from) || Number.isNaN(to))
    throw new HttpError(400, ErrorCode.INVALID_REQUEST, '`from` and `to` must be real dates (YYYY-MM-DD)');
  if (from >= to) throw new HttpError(400, ErrorCode.INVALID_REQUEST, '`from` must not be after `to`');
  return { from: new Date(from).toISOString(), to: new Date(to).toISOString() };
}
