import fc from 'fast-check';
import { isoTime, parseIsoTime, systemClock } from '../../../lib/clock';

// The widest instants a 4-digit-year ISO string can name.
const MIN_MS = Date.parse('0000-01-01T00:00:00.000Z');
const MAX_MS = Date.parse('9999-12-31T23:59:59.999Z');

describe('isoTime', () => {
  it('writes UTC with milliseconds', () => {
    expect(isoTime(0)).toBe('1970-01-01T00:00:00.000Z');
    expect(isoTime(Date.UTC(2026, 11, 3, 8, 44, 40, 123))).toBe('2026-12-03T08:44:40.123Z');
  });

  it('round-trips through parseIsoTime for every instant of 4-digit years', () => {
    fc.assert(
      fc.property(fc.integer({ min: MIN_MS, max: MAX_MS }), (ms) => {
        expect(parseIsoTime(isoTime(ms))).toBe(ms);
      }),
      { numRuns: 2000 },
    );
  });

  it('sorts as it reads: string order is time order', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: MAX_MS }), fc.integer({ min: 0, max: MAX_MS }), (a, b) => {
        expect(Math.sign(isoTime(a).localeCompare(isoTime(b)))).toBe(Math.sign(a - b));
      }),
    );
  });

  it('refuses to write an instant that is not one (a bug upstream, never a stored "Invalid Date")', () => {
    expect(() => isoTime(NaN)).toThrow(RangeError);
    expect(() => isoTime(Infinity)).toThrow(RangeError);
    expect(() => isoTime(8.64e15 + 1)).toThrow(RangeError);
  });

  it('systemClock reads epoch ms now', () => {
    const before = Date.now();
    const now = systemClock();
    expect(now).toBeGreaterThanOrEqual(before);
    expect(now).toBeLessThanOrEqual(Date.now());
  });
});

describe('parseIsoTime', () => {
  it('reads the forms the service writes, with 0-3 fraction digits', () => {
    expect(parseIsoTime('2026-12-03T08:44:40.123Z')).toBe(Date.UTC(2026, 11, 3, 8, 44, 40, 123));
    expect(parseIsoTime('2026-12-03T08:44:40.1Z')).toBe(Date.UTC(2026, 11, 3, 8, 44, 40, 100));
    expect(parseIsoTime('2026-12-03T08:44:40Z')).toBe(Date.UTC(2026, 11, 3, 8, 44, 40));
    expect(parseIsoTime('2028-02-29T00:00:00Z')).toBe(Date.UTC(2028, 1, 29));
  });

  it.each([
    ['an offset', '2026-12-03T08:44:40+00:00'],
    ['a non-zero offset', '2026-12-03T11:44:40.123+03:00'],
    ['a local time (read in the container zone)', '2026-12-03T08:44:40'],
    ['a date alone', '2026-12-03'],
    ['a space for T', '2026-12-03 08:44:40Z'],
    ['a lower-case z', '2026-12-03T08:44:40z'],
    ['four fraction digits', '2026-12-03T08:44:40.1234Z'],
    ['an empty fraction', '2026-12-03T08:44:40.Z'],
    ['February 30 (Date.parse rolls it into March)', '2026-02-30T00:00:00Z'],
    ['February 29 of a common year', '2026-02-29T00:00:00.000Z'],
    ['April 31', '2026-04-31T00:00:00Z'],
    ['month 13', '2026-13-01T00:00:00Z'],
    ['day 0', '2026-01-00T00:00:00Z'],
    ['hour 24 (Date.parse reads the next day)', '2026-01-01T24:00:00Z'],
    ['a leap second', '2026-12-31T23:59:60Z'],
    ['minute 60', '2026-01-01T00:60:00Z'],
    ['an expanded year', '+275760-09-13T00:00:00.000Z'],
    ['a negative year', '-000001-01-01T00:00:00.000Z'],
    ['a 1e400-like string', '1e400'],
    ['Infinity as text', 'Infinity'],
    ['digits', '1767225600000'],
    ['a lone surrogate inside', '2026-12-03T08:44:40\ud800Z'],
    ['a lone surrogate appended', '2026-12-03T08:44:40.123Z\udc00'],
    ['full-width digits', '２０２６-12-03T08:44:40Z'],
    ['a trailing newline', '2026-12-03T08:44:40.123Z\n'],
    ['leading space', ' 2026-12-03T08:44:40.123Z'],
    ['an RFC 2822 date', 'Thu, 03 Dec 2026 08:44:40 GMT'],
    ['the empty string', ''],
  ])('refuses %s', (_what, text) => {
    expect(parseIsoTime(text)).toBeUndefined();
  });

  it.each([
    ['a number', 1767225600000],
    ['NaN', NaN],
    ['a Date object', new Date(0)],
    ['null', null],
    ['undefined', undefined],
    ['an object with toString', { toString: () => '2026-12-03T08:44:40.123Z' }],
    ['an array holding an ISO string', ['2026-12-03T08:44:40.123Z']],
  ])('refuses %s (only strings are read)', (_what, value) => {
    expect(parseIsoTime(value)).toBeUndefined();
  });

  it('never throws; a valid time with any character spliced in is read only if it still reads back the same', () => {
    const spliced = fc
      .tuple(
        fc.integer({ min: MIN_MS, max: MAX_MS }),
        fc.nat(),
        fc.nat({ max: 2 }),
        fc.string({ unit: 'binary', maxLength: 3 }),
      )
      .map(([ms, at, drop, insert]) => {
        const text = isoTime(ms);
        const i = at % (text.length + 1);
        return text.slice(0, i) + insert + text.slice(i + drop);
      });
    fc.assert(
      fc.property(fc.oneof(spliced, fc.string({ unit: 'binary' })), (text) => {
        const ms = parseIsoTime(text);
        if (ms !== undefined)
          expect(isoTime(ms)).toBe(
            text.replace(
              /(:\d\d)(\.\d{1,3})?Z$/,
              (_m, s: string, f?: string) => `${s}.${(f ?? '.').slice(1).padEnd(3, '0')}Z`,
            ),
          );
      }),
      { numRuns: 3000 },
    );
  });

  it('whatever it accepts, it accepts only in the form it reads back', () => {
    fc.assert(
      fc.property(
        fc.record({
          y: fc.integer({ min: 0, max: 9999 }),
          mo: fc.integer({ min: 0, max: 13 }),
          d: fc.integer({ min: 0, max: 32 }),
          h: fc.integer({ min: 0, max: 25 }),
          mi: fc.integer({ min: 0, max: 61 }),
          s: fc.integer({ min: 0, max: 61 }),
        }),
        ({ y, mo, d, h, mi, s }) => {
          const p = (n: number, w = 2) => String(n).padStart(w, '0');
          const text = `${p(y, 4)}-${p(mo)}-${p(d)}T${p(h)}:${p(mi)}:${p(s)}Z`;
          const ms = parseIsoTime(text);
          const real = mo >= 1 && mo <= 12 && d >= 1 && d <= daysIn(y, mo) && h <= 23 && mi <= 59 && s <= 59;
          expect(ms !== undefined).toBe(real);
          if (ms !== undefined) expect(isoTime(ms)).toBe(text.replace('Z', '.000Z'));
        },
      ),
      { numRuns: 3000 },
    );
  });
});

function daysIn(year: number, month: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}
