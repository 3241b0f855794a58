import { MoneyError } from './errors';

/**
 * Exact money and quantities. T-Bank sends MoneyValue {currency, units, nano}
 * and Quotation {units, nano}: value = units + nano / 1e9, units an int64 as a
 * string, nano an int32 in (-1e9, 1e9), both carrying the same sign. We hold
 * the value as a canonical decimal string ("-1.5", "0.01", "120"), computed
 * through bigint nanos: no float ever holds money or a quantity.
 */

/** An exact decimal with at most 9 fractional digits, canonical: no '+', no leading zeros, no trailing fractional zeros, no "-0". */
export type Decimal = string & { readonly __decimal: unique symbol };

export interface Quotation {
  units: string;
  nano: number;
}
export interface MoneyValue extends Quotation {
  currency: string;
}
/** What we store and what our read API returns. */
export interface Money {
  currency: string;
  value: Decimal;
}

const NANO = 1_000_000_000n;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UNITS = /^-?\d{1,19}$/;
// Zero values sometimes come with an empty currency.
const CURRENCY = /^(?:[a-z]{3})?$/i;
const DECIMAL = /^(-)?(\d{1,19})(?:\.(\d{1,9}))?$/;

/** A Quotation as total nanos; refuses out-of-range units or nano and mixed signs. */
export function quotationNanos(q: unknown, what = 'quotation'): bigint {
  if (!q || typeof q !== 'object') throw new MoneyError(`${what}: not an object`);
  const { units = '0', nano = 0 } = q as { units?: unknown; nano?: unknown };
  // The REST gateway writes int64 as a string; a JSON number is accepted only when it is a safe integer.
  const unitsText = typeof units === 'number' && Number.isSafeInteger(units) ? String(units) : units;
  if (typeof unitsText !== 'string' || !UNITS.test(unitsText))
    throw new MoneyError(`${what}: units ${JSON.stringify(units)} is not an int64`);
  const u = BigInt(unitsText);
  if (u < INT64_MIN || u > INT64_MAX) throw new MoneyError(`${what}: units ${unitsText} is out of the int64 range`);
  if (typeof nano !== 'number' || !Number.isInteger(nano) || nano <= -1e9 || nano >= 1e9)
    throw new MoneyError(`${what}: nano ${JSON.stringify(nano)} is not in (-1e9, 1e9)`);
  if ((u > 0n && nano < 0) || (u < 0n && nano > 0))
    throw new MoneyError(`${what}: units ${unitsText} and nano ${nano} carry different signs`);
  return u * NANO + BigInt(nano);
}

/** An integer count of 10^-digits as its canonical decimal text. */
function scaledToText(n: bigint, digits: number): string {
  const unit = 10n ** BigInt(digits);
  const negative = n < 0n;
  const abs = negative ? -n : n;
  const fraction = (abs % unit).toString().padStart(digits, '0').replace(/0+$/, '');
  return `${negative ? '-' : ''}${abs / unit}${fraction ? `.${fraction}` : ''}`;
}

/** A decimal text (matched by `pattern`: sign, whole, fraction) as an integer count of 10^-digits. */
function textToScaled(text: string, pattern: RegExp, digits: number): bigint {
  const m = pattern.exec(text);
  if (!m) throw new MoneyError(`${JSON.stringify(text)} is not a decimal with at most ${digits} fractional digits`);
  const abs = BigInt(m[2]) * 10n ** BigInt(digits) + BigInt((m[3] ?? '').padEnd(digits, '0'));
  return m[1] ? -abs : abs;
}

export const nanosToDecimal = (n: bigint): Decimal => scaledToText(n, 9) as Decimal;
export const decimalToNanos = (text: string): bigint => textToScaled(text, DECIMAL, 9);

export function nanosToQuotation(n: bigint): Quotation {
  // Truncating division keeps units and nano on the same sign, as the contract requires.
  const units = n / NANO;
  if (units < INT64_MIN || units > INT64_MAX) throw new MoneyError(`${n} nanos is out of the int64 range`);
  return { units: units.toString(), nano: Number(n - units * NANO) };
}

export const quotation = (q: unknown, what?: string): Decimal => nanosToDecimal(quotationNanos(q, what));

export function money(m: unknown, what = 'money'): Money {
  const currency = (m as { currency?: unknown } | null)?.currency;
  if (typeof currency !== 'string' || !CURRENCY.test(currency))
    throw new MoneyError(`${what}: currency ${JSON.stringify(currency)} is not an ISO code`);
  return { currency: currency.toLowerCase(), value: quotation(m, what) };
}

/** Optional fields: T-Bank omits zero messages entirely. */
export const optionalMoney = (m: unknown, what?: string): Money | undefined =>
  m === undefined || m === null ? undefined : money(m, what);
export const optionalQuotation = (q: unknown, what?: string): Decimal | undefined =>
  q === undefined || q === null ? undefined : quotation(q, what);

/**
 * Products and their sums: a per-unit amount times a quantity held, each of at
 * most 9 fractional digits, has at most 18. Held as bigint atoms of 1e-18
 * ("exact" decimals), never rounded: a sum of expected payments stays the sum
 * of its parts to the last digit.
 */
const EXACT = /^(-)?(\d{1,40})(?:\.(\d{1,18}))?$/;
export const exactAtoms = (text: string): bigint => textToScaled(text, EXACT, 18);
export const atomsToExact = (n: bigint): string => scaledToText(n, 18);

/** a × b, exact (canonical, up to 18 fractional digits). */
export const multiplyDecimals = (a: string, b: string): string => atomsToExact(decimalToNanos(a) * decimalToNanos(b));

/** The exact sum of decimals of up to 18 fractional digits. */
export const sumExact = (values: readonly string[]): string =>
  atomsToExact(values.reduce((sum, v) => sum + exactAtoms(v), 0n));
