import { systemClock } from '../clock';
import { DomainError } from '../errors';
import { monotonicFactory } from 'ulid';
import { randomBytes } from 'node:crypto';

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
  constructor(
    readonly input: unknown,
    reason: string,
  ) {
    super(`invalid id: ${reason}`);
  }
}

const monotonic = monotonicFactory();

export function newId(now: number = systemClock()): string {
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

const MAX_TIME = 2 ** 48 - 1;
// Entropy starts below 2^64 so that 2^16 bits of headroom absorb any number of
// increments one millisecond can see without overflowing into the time part.
const ENTROPY_START_MASK = (1n << 64n) - 1n;

/** Where a millisecond's entropy starts; `randomStart` unless a caller needs ids it can mint again. */
export type EntropyStart = (time: number) => bigint;

export const randomStart: EntropyStart = () => BigInt(`0x${randomBytes(10).toString('hex')}`) & ENTROPY_START_MASK;

/**
 * Ids for GIVEN times (an import minting ids for the past), not for the clock:
 * within one millisecond the entropy goes up by one per call, so ids of equal
 * time keep the call order, whatever order the times come in. (`newId`'s
 * monotonic factory instead reuses its last time when handed an older one:
 * the id's time would then lie.) With a deterministic `start`, the same calls
 * in the same order mint the same ids: a re-run plans the ids a killed run did.
 * Holds one entry per distinct millisecond seen.
 */
export function idsAtTimes(start: EntropyStart = randomStart): (time: number) => string {
  const last = new Map<number, bigint>();
  return (time) => {
    if (!Number.isInteger(time) || time < 0 || time > MAX_TIME)
      throw new RangeError(`an id time must be an integer 0..2^48-1 ms, not ${time}`);
    const previous = last.get(time);
    const entropy = previous === undefined ? start(time) & ENTROPY_START_MASK : previous + 1n;
    last.set(time, entropy);
    return encode(BigInt(time), 10) + encode(entropy, 16);
  };
}

function encode(value: bigint, length: number): string {
  let out = '';
  for (let i = 0; i < length; i++) {
    out = CROCKFORD[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return out;
}
