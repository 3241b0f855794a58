import { parseId } from '../ident';
import { StaleButtonError } from './errors';

/**
 * `callback_data` of our inline buttons: `<version>:<action>:<ulid>`, e.g.
 * `v1:r:01m8vmvjn4ja6w8rp8pdhdjykt` (31 bytes; Telegram allows 64). The
 * version lets a future format refuse old buttons by name instead of
 * misreading them; anything we cannot read is a StaleButtonError, never a
 * store call.
 */
export const CALLBACK_VERSION = 'v1';
export const MAX_CALLBACK_BYTES = 64;

export const BUTTON_ACTIONS = { retry: 'r', cancel: 'c', open: 'o', keep: 'k' } as const;
export type ButtonAction = keyof typeof BUTTON_ACTIONS;

export function encodeCallback(action: ButtonAction, id: string): string {
  const data = `${CALLBACK_VERSION}:${BUTTON_ACTIONS[action]}:${parseId(id)}`;
  // Cannot happen with a ULID; guards a future format from Telegram's 400 BUTTON_DATA_INVALID.
  if (Buffer.byteLength(data, 'utf8') > MAX_CALLBACK_BYTES)
    throw new Error(`callback_data over ${MAX_CALLBACK_BYTES} bytes`);
  return data;
}

/** The action and the parsed id; old formats (`retry:123`), unknown versions or actions and bad ids are stale. */
export function parseCallback(data: unknown): { action: ButtonAction; id: string } {
  if (typeof data !== 'string' || data.length === 0 || Buffer.byteLength(data, 'utf8') > MAX_CALLBACK_BYTES) {
    throw new StaleButtonError('no readable data');
  }
  const parts = data.split(':');
  if (parts.length !== 3 || parts[0] !== CALLBACK_VERSION) throw new StaleButtonError('unknown button version');
  const action = (Object.keys(BUTTON_ACTIONS) as ButtonAction[]).find((a) => BUTTON_ACTIONS[a] === parts[1]);
  if (!action) throw new StaleButtonError('unknown action');
  try {
    return { action, id: parseId(parts[2]) };
  } catch {
    throw new StaleButtonError('not a download id');
  }
}
