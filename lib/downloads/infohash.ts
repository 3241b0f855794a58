import { InvalidInfohashError } from './errors';
import type { Infohash, InfohashKind } from './model';

/** The shapes are the model's (errors.ts imports the model, which must not import this parser back). */
export type { Infohash, InfohashKind };

/**
 * BitTorrent infohashes: v1 = SHA-1 (40 hex), v2 = SHA-256 (64 hex). The kind
 * is derived from the length, never stored apart from the hash or guessed.
 * Every hash that enters the system passes through `parseInfohash`.
 */

/** A download holds at most this many hashes (a hybrid torrent has two). */
export const MAX_INFOHASHES = 16;

const KIND_BY_LENGTH: Record<number, InfohashKind> = { 40: 'v1', 64: 'v2' };

export function kindOf(hex: string): InfohashKind | undefined {
  return /^[0-9a-f]+$/.test(hex) ? KIND_BY_LENGTH[hex.length] : undefined;
}

/** 40 or 64 hex chars in any case, or a v1 hash in 32-char base32 (as in old magnets). */
export function parseInfohash(input: unknown): Infohash {
  if (typeof input !== 'string') throw new InvalidInfohashError('an infohash must be a string');
  const text = input.length === 32 ? base32ToHex(input) : input.toLowerCase();
  const kind = kindOf(text);
  if (!kind) {
    throw new InvalidInfohashError(
      `invalid infohash ${JSON.stringify(input.slice(0, 80))}: expected 40 hex (v1), 64 hex (v2) or 32 base32 (v1) characters`,
    );
  }
  return { infohash: text, kind };
}

/** Parses a list, drops duplicates, keeps v1 before v2 (the order of a hybrid magnet). */
export function parseInfohashes(inputs: unknown[]): Infohash[] {
  if (inputs.length === 0) throw new InvalidInfohashError('at least one infohash is required');
  if (inputs.length > MAX_INFOHASHES)
    throw new InvalidInfohashError(`at most ${MAX_INFOHASHES} infohashes are allowed`);
  return sortHashes(inputs.map(parseInfohash));
}

export function sortHashes(hashes: Infohash[]): Infohash[] {
  const unique = new Map(hashes.map((h) => [h.infohash, h]));
  return [...unique.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.infohash.localeCompare(b.infohash));
}

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';

function base32ToHex(text: string): string {
  let bits = '';
  for (const ch of text.toUpperCase()) {
    const value = BASE32.indexOf(ch);
    if (value < 0) return text; // not base32: let the hex check reject it with the usual message
    bits += value.toString(2).padStart(5, '0');
  }
  let hex = '';
  for (let i = 0; i + 4 <= bits.length; i += 4) hex += parseInt(bits.slice(i, i + 4), 2).toString(16);
  return hex;
}
