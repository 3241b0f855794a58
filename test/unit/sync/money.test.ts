import fc from 'fast-check';
import {
  decimalToNanos,
  money,
  nanosToDecimal,
  nanosToQuotation,
  quotation,
  quotationNanos,
} from '../../../lib/sync/money';
import { MoneyError } from '../../../lib/sync/errors';

const INT64_MAX = 2n ** 63n - 1n;
const nanos = fc.bigInt({ min: -(2n ** 63n) * 1_000_000_000n + 1_000_000_000n, max: INT64_MAX * 1_000_000_000n });

describe('money: exact decimals from MoneyValue / Quotation', () => {
  it('follows the documented sign rules', () => {
    expect(quotation({ units: '0', nano: -10_000_000 })).toBe('-0.01');
    expect(quotation({ units: '-1', nano: -500_000_000 })).toBe('-1.5');
    expect(quotation({ units: '114', nano: 250_000_000 })).toBe('114.25');
    expect(quotation({ units: '0', nano: 0 })).toBe('0');
    expect(quotation({})).toBe('0'); // zero fields are omitted by the gateway
    expect(money({ currency: 'RUB', units: '-7912', nano: 0 })).toEqual({ currency: 'rub', value: '-7912' });
    expect(nanosToQuotation(-10_000_000n)).toEqual({ units: '0', nano: -10_000_000 });
    expect(nanosToQuotation(-1_500_000_000n)).toEqual({ units: '-1', nano: -500_000_000 });
  });

  it.each([
    [{ units: '1', nano: -1 }, 'different signs'],
    [{ units: '-1', nano: 5 }, 'different signs'],
    [{ units: '0', nano: 1_000_000_000 }, 'not in'],
    [{ units: '0', nano: -1_000_000_000 }, 'not in'],
    [{ units: '0', nano: 0.5 }, 'not in'],
    [{ units: '9223372036854775808', nano: 0 }, 'int64'],
    [{ units: '1e3', nano: 0 }, 'int64'],
    [{ units: 1.5, nano: 0 }, 'int64'],
    [{ units: 2 ** 60, nano: 0 }, 'int64'], // a JSON number past 2^53 has already lost digits
    [null, 'not an object'],
  ])('refuses %j (%s)', (q, message) => {
    expect(() => quotation(q)).toThrow(MoneyError);
    expect(() => quotation(q)).toThrow(message);
  });

  it('refuses a currency that is not a code', () => {
    expect(() => money({ currency: 'rubles', units: '1', nano: 0 })).toThrow(MoneyError);
    expect(() => money({ units: '1', nano: 0 })).toThrow('currency');
  });

  it('property: units and nano always carry the same sign and stay in bounds', () => {
    fc.assert(
      fc.property(nanos, (n) => {
        const q = nanosToQuotation(n);
        expect(Math.abs(q.nano)).toBeLessThan(1e9);
        expect(Number.isInteger(q.nano)).toBe(true);
        const u = BigInt(q.units);
        expect(u > 0n ? q.nano >= 0 : u < 0n ? q.nano <= 0 : true).toBe(true);
        expect(u <= INT64_MAX && u >= -(2n ** 63n)).toBe(true);
      }),
      { numRuns: 10_000 },
    );
  });

  it('property: quotation → decimal → nanos → quotation round-trips over 10,000 generated values', () => {
    fc.assert(
      fc.property(nanos, (n) => {
        const q = nanosToQuotation(n);
        const d = quotation(q);
        expect(decimalToNanos(d)).toBe(n);
        expect(nanosToQuotation(decimalToNanos(d))).toEqual(q);
        expect(quotationNanos(q)).toBe(n);
        // Canonical: one text per value.
        expect(d).toMatch(/^-?(0|[1-9]\d*)(\.\d*[1-9])?$/);
        expect(d).not.toBe('-0');
        expect(nanosToDecimal(decimalToNanos(d))).toBe(d);
      }),
      { numRuns: 10_000 },
    );
  });

  it('property: the decimal agrees with the sign and ordering of the value', () => {
    fc.assert(
      fc.property(nanos, nanos, (a, b) => {
        const [da, db] = [nanosToDecimal(a), nanosToDecimal(b)];
        expect(da.startsWith('-')).toBe(a < 0n);
        expect(decimalToNanos(da) < decimalToNanos(db)).toBe(a < b);
      }),
      { numRuns: 2_000 },
    );
  });
});
