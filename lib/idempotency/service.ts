import { Clock, systemClock } from '../clock';
import { createHash, randomUUID } from 'node:crypto';
import type { Logger } from '../log';
import { IdempotencyInProgressError, IdempotencyKeyInvalidError, IdempotencyKeyReusedError } from './errors';
import { recordKey } from './keys';
import type { IdempotencyStore, StoredResponse } from './store';

/**
 * `Idempotency-Key` for POSTs whose answer may be lost (a 5xx or a timeout
 * after the write committed): the first request with a key claims a record
 * with ONE conditional put; a retry with the same key and payload gets the
 * stored answer replayed, a retry while the first still runs gets 409, the
 * same key with another payload gets 422. A failed attempt (thrown, or 5xx)
 * deletes its record so the retry runs again. Model: Powertools idempotency.
 */

export const IDEMPOTENCY_HEADER = 'idempotency-key';
export const REPLAYED_HEADER = 'idempotent-replayed';
/** How long a completed answer is replayed. */
export const RECORD_TTL_S = 24 * 3600;
/** An in-progress record older than this was abandoned (the function died): above the 10 s Lambda timeout. */
export const IN_PROGRESS_MS = 30_000;

// Printable ASCII without spaces, as Stripe's keys; a UUID is the usual choice.
const KEY = /^[\x21-\x7e]{1,255}$/;

export interface IdempotencyDeps {
  store: IdempotencyStore;
  log: Logger;
  now?: Clock;
}

export interface IdempotentRequest {
  route: string;
  principal: string;
  /** The header's value; undefined = not idempotent, `run` just runs. */
  clientKey: string | undefined;
  /** The parsed request body: equal JSON is the same payload whatever its spacing or key order. */
  payload: unknown;
}

export function idempotencyKeyOf(headers: Record<string, string | undefined> | undefined): string | undefined {
  const name = Object.keys(headers ?? {}).find((k) => k.toLowerCase() === IDEMPOTENCY_HEADER);
  if (name === undefined) return undefined;
  const value = headers![name];
  if (value === undefined || !KEY.test(value))
    throw new IdempotencyKeyInvalidError('1 to 255 printable ASCII characters, no spaces');
  return value;
}

/** A claimed record: only this attempt completes or releases it. */
export interface Held {
  route: string;
  key: { PK: string; SK: string };
  token: string;
}

/** Before the work: run it (no key), replay a stored answer, or hold the record while it runs. */
export type Begun = { run: true } | { replay: StoredResponse } | { held: Held };

export async function begin(deps: IdempotencyDeps, request: IdempotentRequest): Promise<Begun> {
  if (request.clientKey === undefined) return { run: true };
  const now = deps.now ?? systemClock;
  const key = recordKey(request.route, request.principal, request.clientKey);
  const payloadHash = hashPayload(request.payload);
  const token = randomUUID();
  const at = now();
  const claim = await deps.store.claim(
    key,
    {
      status: 'in_progress',
      payload_hash: payloadHash,
      token,
      expires_at: Math.floor(at / 1000) + RECORD_TTL_S,
      in_progress_until: at + IN_PROGRESS_MS,
    },
    at,
  );
  if (claim.taken) return { held: { route: request.route, key, token } };
  const holder = claim.holder;
  if (holder.payload_hash !== payloadHash) throw new IdempotencyKeyReusedError();
  if (holder.status === 'completed' && holder.response) {
    deps.log.info('idempotent_replay', { route: request.route });
    return { replay: { ...holder.response, headers: { ...holder.response.headers, [REPLAYED_HEADER]: 'true' } } };
  }
  throw new IdempotencyInProgressError();
}

/** After the work answered: a 5xx releases the record so the retry runs again; any other answer is stored. */
export async function finish(deps: IdempotencyDeps, held: Held, response: StoredResponse): Promise<void> {
  if (response.statusCode >= 500) return abandon(deps, held);
  try {
    await deps.store.complete(held.key, held.token, response);
  } catch (err) {
    // The answer stands; the record stays in progress until IN_PROGRESS_MS, then a retry runs again.
    deps.log.error('idempotency_complete_failed', { route: held.route, err });
  }
}

/** The work threw: the record is deleted if this attempt still holds it, so the retry runs again. */
export async function abandon(deps: IdempotencyDeps, held: Held): Promise<void> {
  try {
    await deps.store.release(held.key, held.token);
  } catch (err) {
    deps.log.error('idempotency_release_failed', { route: held.route, err }); // it expires as abandoned after IN_PROGRESS_MS
  }
}

/** The same three steps around a function: for callers that are not a middy handler. */
export async function idempotent(
  deps: IdempotencyDeps,
  request: IdempotentRequest,
  run: () => Promise<StoredResponse>,
): Promise<StoredResponse> {
  const begun = await begin(deps, request);
  if ('replay' in begun) return begun.replay;
  if (!('held' in begun)) return run();
  let response: StoredResponse;
  try {
    response = await run();
  } catch (err) {
    await abandon(deps, begun.held);
    throw err;
  }
  await finish(deps, begun.held, response);
  return response;
}

export function hashPayload(payload: unknown): string {
  return createHash('sha256').update(canonicalJson(payload)).digest('hex');
}

/** JSON with object keys sorted at every level. */
function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((value as Record<string, unknown>)[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
