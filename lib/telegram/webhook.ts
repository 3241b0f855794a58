import { createHash, timingSafeEqual } from 'node:crypto';
import type { Update } from 'grammy/types';
import { MalformedUpdateError } from './errors';

/** functions/telegram/webhook.ts imports it from here (the handler edge's file): the class is errors.ts's. */
export { MalformedUpdateError };

/** The webhook's edge: the secret header and the shape of an Update, checked before anything runs. */

export const SECRET_HEADER = 'x-telegram-bot-api-secret-token';

/** Constant time over digests: neither the length nor a prefix of the secret leaks through timing. */
export function secretMatches(presented: string | undefined, secret: string): boolean {
  if (!secret) return false;
  const digest = (s: string) => createHash('sha256').update(s, 'utf8').digest();
  const ok = timingSafeEqual(digest(presented ?? ''), digest(secret));
  return ok && presented !== undefined;
}

const KINDS = ['message', 'callback_query'] as const;

/** An object with an integer update_id; of the kinds we handle, each must be an object. Others are ignored by the bot. */
export function parseUpdate(body: unknown): Update {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new MalformedUpdateError('not an object');
  const update = body as Record<string, unknown>;
  if (!Number.isSafeInteger(update.update_id)) throw new MalformedUpdateError('update_id is not an integer');
  for (const kind of KINDS) {
    const part = update[kind];
    if (part === undefined) continue;
    if (part === null || typeof part !== 'object' || Array.isArray(part))
      throw new MalformedUpdateError(`${kind} is not an object`);
    const from = (part as Record<string, unknown>).from;
    if (
      from !== undefined &&
      (from === null || typeof from !== 'object' || !Number.isSafeInteger((from as Record<string, unknown>).id))
    ) {
      throw new MalformedUpdateError(`${kind}.from has no integer id`);
    }
  }
  const message = update.message as Record<string, unknown> | undefined;
  if (
    message &&
    (typeof message.chat !== 'object' ||
      message.chat === null ||
      !Number.isSafeInteger((message.chat as Record<string, unknown>).id))
  ) {
    throw new MalformedUpdateError('message.chat has no integer id');
  }
  const query = update.callback_query as Record<string, unknown> | undefined;
  if (query && (typeof query.id !== 'string' || (query.data !== undefined && typeof query.data !== 'string'))) {
    throw new MalformedUpdateError('callback_query needs a string id and string data');
  }
  return update as unknown as Update;
}
