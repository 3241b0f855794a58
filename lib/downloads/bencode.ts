/**
 * A strict, bounded bencode reader (BEP 3) for files people upload. Strict
 * where a lenient reader would let two parties see two different files:
 * integers and string lengths without leading zeros or `-0`, no bytes after
 * the value, no duplicate dictionary key anywhere, and (where the caller asks,
 * i.e. inside `info`, whose exact bytes are the infohash) keys in ascending
 * byte order. Bounded: nesting depth, string lengths against the bytes really
 * left (a 200 MB length in a 2 KB file fails at once, nothing is allocated),
 * integers to 2^53. Dictionaries are Maps: no key of a file ever lands on an
 * object's prototype. Every value records its byte span, so a caller hashes
 * the file's own bytes, never a re-encoding (decision 400).
 */

export type Bvalue = Bint | Bbytes | Blist | Bdict;
interface Span {
  start: number;
  end: number;
}
export interface Bint extends Span {
  kind: 'int';
  value: number;
}
export interface Bbytes extends Span {
  kind: 'bytes';
  value: Buffer;
}
export interface Blist extends Span {
  kind: 'list';
  value: Bvalue[];
}
export interface Bdict extends Span {
  kind: 'dict';
  /** Keys as latin1 strings (one char per byte): exact and reversible. */
  value: Map<string, Bvalue>;
  /** Whether the keys were in ascending byte order. */
  sorted: boolean;
}

export class BencodeError extends Error {
  constructor(
    message: string,
    readonly at: number,
  ) {
    super(`${message} (at byte ${at})`);
    this.name = 'BencodeError';
  }
}

export interface BencodeOptions {
  /** Deepest nesting of lists and dictionaries (the top value is depth 1). */
  maxDepth: number;
}

const I = 0x69;
const L = 0x6c;
const D = 0x64;
const E = 0x65;
const COLON = 0x3a;
const MINUS = 0x2d;
const ZERO = 0x30;
const NINE = 0x39;
/** Digits of a length or an integer: 2^53 has 16. */
const MAX_DIGITS = 16;

export function decodeBencode(buf: Buffer, options: BencodeOptions): Bvalue {
  let at = 0;

  const digits = (from: number, stop: number, what: string): number => {
    let i = from;
    while (i < buf.length && buf[i] >= ZERO && buf[i] <= NINE) i++;
    if (i === from) throw new BencodeError(`${what}: a digit expected`, from);
    if (i - from > MAX_DIGITS) throw new BencodeError(`${what}: more than ${MAX_DIGITS} digits`, from);
    if (buf[from] === ZERO && i - from > 1) throw new BencodeError(`${what}: a leading zero`, from);
    if (i >= buf.length || buf[i] !== stop)
      throw new BencodeError(`${what}: "${String.fromCharCode(stop)}" expected`, i);
    const n = Number(buf.subarray(from, i).toString('latin1'));
    if (!Number.isSafeInteger(n)) throw new BencodeError(`${what}: larger than 2^53`, from);
    at = i + 1;
    return n;
  };

  const bytes = (): Bbytes => {
    const start = at;
    const length = digits(at, COLON, 'string length');
    // Checked before anything is read or allocated: the length a file claims is bounded by the file.
    if (length > buf.length - at)
      throw new BencodeError(
        `string length ${length} is past the end of the file (${buf.length - at} bytes left)`,
        start,
      );
    const value = buf.subarray(at, at + length);
    at += length;
    return { kind: 'bytes', value, start, end: at };
  };

  const value = (depth: number): Bvalue => {
    if (at >= buf.length) throw new BencodeError('unexpected end of the file', at);
    const start = at;
    const c = buf[at];
    if (c === I) {
      at++;
      const negative = buf[at] === MINUS;
      if (negative) at++;
      const n = digits(at, E, 'integer');
      if (negative && n === 0) throw new BencodeError('integer: -0', start);
      return { kind: 'int', value: negative ? -n : n, start, end: at };
    }
    if (c >= ZERO && c <= NINE) return bytes();
    if (c !== L && c !== D) throw new BencodeError(`not bencode: byte 0x${c.toString(16)}`, at);
    if (depth > options.maxDepth) throw new BencodeError(`nested deeper than ${options.maxDepth} levels`, at);
    at++;
    if (c === L) {
      const items: Bvalue[] = [];
      while (buf[at] !== E) items.push(value(depth + 1));
      at++;
      return { kind: 'list', value: items, start, end: at };
    }
    const map = new Map<string, Bvalue>();
    let sorted = true;
    let previous: Buffer | undefined;
    while (buf[at] !== E) {
      if (at >= buf.length) throw new BencodeError('unexpected end of the file', at);
      if (buf[at] < ZERO || buf[at] > NINE) throw new BencodeError('a dictionary key must be a string', at);
      const keyAt = at;
      const key = bytes().value;
      const name = key.toString('latin1');
      if (map.has(name)) throw new BencodeError(`duplicate dictionary key ${JSON.stringify(printable(name))}`, keyAt);
      if (previous && Buffer.compare(previous, key) > 0) sorted = false;
      previous = key;
      map.set(name, value(depth + 1));
    }
    at++;
    return { kind: 'dict', value: map, sorted, start, end: at };
  };

  const top = value(1);
  if (at !== buf.length) throw new BencodeError(`${buf.length - at} bytes after the end of the value`, at);
  return top;
}

/** A key or string shown in an error: printable ASCII only, bounded. */
export function printable(text: string): string {
  return text.slice(0, 60).replace(/[^\x20-\x7e]/g, '?');
}
