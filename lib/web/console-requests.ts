import type { APIGatewayProxyEventV2 } from 'aws-lambda';
import { ErrorCode, HttpError } from '../http/errors';
import { isId } from '../ident';
import { JOB_PHASES, JobPhase } from './console-phases';

/**
 * The console's path ids and query, read at the edge: a malformed id is a 404
 * before any storage call (as the API's ids), a malformed query field a 400.
 */

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** A scan job id: a canonical UUID, compared lower-cased (the request contract's rule). */
export function parseJobId(event: Pick<APIGatewayProxyEventV2, 'pathParameters'>): string {
  const raw = event.pathParameters?.job_id;
  const id = typeof raw === 'string' && raw.length === 36 ? raw.toLowerCase() : '';
  if (!UUID.test(id)) throw new HttpError(404, ErrorCode.NOT_FOUND, 'no such scan job');
  return id;
}

/** A failure's id: a ULID (the failure store's sort key). */
export function parseFailureId(event: Pick<APIGatewayProxyEventV2, 'pathParameters'>): string {
  const raw = event.pathParameters?.id;
  if (!isId(raw)) throw new HttpError(404, ErrorCode.NOT_FOUND, 'no such failure');
  return raw;
}

export interface ConsoleQuery {
  phase?: JobPhase;
  /** Lower-case hex and dashes, as job ids are written. */
  prefix?: string;
  page?: number;
  /** /sync's cursor: the last user id of the previous page. */
  after?: string;
  attempt?: string;
  retried?: string;
}

const FIELDS = new Set(['phase', 'prefix', 'page', 'after', 'attempt', 'retried']);

export function parseConsoleQuery(query: Record<string, string>): ConsoleQuery {
  const out: ConsoleQuery = {};
  for (const [name, value] of Object.entries(query)) {
    if (!FIELDS.has(name)) throw bad(`unknown query field ${JSON.stringify(name.slice(0, 40))}`);
    if (name === 'phase') {
      if (!(JOB_PHASES as readonly string[]).includes(value))
        throw bad(`phase must be one of ${JOB_PHASES.join(', ')}`);
      out.phase = value as JobPhase;
    } else if (name === 'prefix') {
      const prefix = value.toLowerCase();
      if (!/^[0-9a-f-]{1,36}$/.test(prefix)) throw bad('prefix: the start of a job id (hex digits and dashes)');
      out.prefix = prefix;
    } else if (name === 'page') {
      if (!/^[1-9]\d{0,3}$/.test(value)) throw bad('page must be a whole number from 1 to 9999');
      out.page = Number(value);
    } else {
      if (!isId(value)) throw bad(`${name} must be an id`);
      out[name as 'after' | 'attempt' | 'retried'] = value;
    }
  }
  return out;
}

const bad = (message: string) => new HttpError(400, ErrorCode.INVALID_REQUEST, message);
