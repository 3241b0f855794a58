import { DomainError } from '../errors';
import { monotonicFactory } from 'ulid';

/**
 * The one generator and the one parser of entity ids.
 *
 * Ids are ULIDs written in lowercase: sortable by creation time, 26 chars of
 * Crockford base32. Monotonic entropy keeps ids minted in the same millisecond
 * strictly increasing, so "newest first by id" is a total order.
 */

const ULID_LENGTH = 26;
// Crockford base32 without I, L, O, U; first char <= 7 (48-bit timestamp bound).
const ULID_PATTERN = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/;

export class InvalidIdError extends DomainError {
  readonly code = 'NOT_FOUND';
  readonly status = 404;
  // An id that cannot exist is answered like one that does not: no hint about the format.
  override get publicMessage(): string {
    return 'not found';
  }
  constructor(readonly input: unknown, reason: string) {
    super(`invalid id: ${reason}`);
    this.name = 'InvalidIdError';
  }
}

const monotonic = monotonicFactory();

export function newId(now: number = Date.now()): string {
  return monotonic(now).toLowerCase();
}

/** Normalises case and validates; never consults storage. */
export function parseId(input: unknown): string {
  if (typeof input !== 'string') throw new InvalidIdError(input, 'not a string');
  if (input.length !== ULID_LENGTH) {
    throw new InvalidIdError(input, `expected ${ULID_LENGTH} characters, got ${input.length}`);
  }
  const id = input.toLowerCase();
  if (!ULID_PATTERN.test(id)) throw new InvalidIdError(input, 'not a ULID (Crockford base32)');
  return id;
}

export function isId(input: unknown): input is string {
  try {
    return parseId(input) === input;
  } catch {
    return false;
  }
}

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';

/** Milliseconds since the epoch encoded in an id's first 10 characters. */
export function idTime(id: string): number {
  const parsed = parseId(id);
  let ms = 0;
  for (const ch of parsed.slice(0, 10)) ms = ms * 32 + CROCKFORD.indexOf(ch);
  return ms;
}
