import fc from 'fast-check';
import { idTime, InvalidIdError, isId, newId, parseId } from '../../../lib/ident';

const CROCKFORD = '0123456789abcdefghjkmnpqrstvwxyz';
const crockfordChar = fc.constantFrom(...CROCKFORD.split(''));
const validId = fc
  .tuple(fc.constantFrom(...'01234567'.split('')), fc.array(crockfordChar, { minLength: 25, maxLength: 25 }))
  .map(([first, rest]) => first + rest.join(''));

describe('newId', () => {
  it('is a lowercase 26-char ULID that parses to itself', () => {
    const id = newId();
    expect(id).toMatch(/^[0-7][0-9a-hjkmnp-tv-z]{25}$/);
    expect(parseId(id)).toBe(id);
  });

  it('is unique and strictly increasing in a tight loop (monotonic within one millisecond)', () => {
    const ids = Array.from({ length: 50_000 }, () => newId());
    expect(new Set(ids).size).toBe(ids.length);
    for (let i = 1; i < ids.length; i++) expect(ids[i] > ids[i - 1]).toBe(true);
  });

  it('encodes the creation time and sorts by it when the clock moves forward', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 1, max: 10 ** 6 }), { minLength: 1, maxLength: 20 }), (steps) => {
        let previous = newId();
        let t = idTime(previous);
        for (const step of steps) {
          t += step;
          const id = newId(t);
          expect(idTime(id)).toBe(t);
          expect(id > previous).toBe(true);
          previous = id;
        }
      }),
    );
  });

  it('never goes backwards when the clock does', () => {
    const later = newId(Date.now() + 60_000);
    const afterClockStepBack = newId(Date.now());
    expect(afterClockStepBack > later).toBe(true);
  });
});

describe('parseId', () => {
  it('round-trips every valid id and normalises upper case', () => {
    fc.assert(
      fc.property(validId, (id) => {
        expect(parseId(id)).toBe(id);
        expect(parseId(id.toUpperCase())).toBe(id);
        expect(isId(id)).toBe(true);
      }),
    );
  });

  it.each([
    ['numeric', 12345],
    ['null', null],
    ['empty', ''],
    ['25 chars', '01arz3ndektsv4rrffq69g5fa'],
    ['27 chars', '01arz3ndektsv4rrffq69g5favv'],
    ['letter I', '01arz3ndektsv4rrffq69g5fai'],
    ['letter L', '01arz3ndektsv4rrffq69g5fal'],
    ['letter O', '01arz3ndektsv4rrffq69g5fao'],
    ['letter U', '01arz3ndektsv4rrffq69g5fau'],
    ['timestamp overflow (first char 8)', '81arz3ndektsv4rrffq69g5fav'],
    ['a UUID', '3f2504e0-4f89-11d3-9a0c-0305e82c3301'],
    ['padding around an id', ' 01arz3ndektsv4rrffq69g5fa'],
    ['path traversal', '../../../../../../../etc/pa'],
  ])('rejects %s with a typed error', (_name, input) => {
    expect(() => parseId(input)).toThrow(InvalidIdError);
    expect(isId(input)).toBe(false);
  });

  it('rejects every string that is not 26 Crockford chars', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 40 }), (s) => {
        const valid = /^[0-7][0-9a-hjkmnp-tv-z]{25}$/i.test(s);
        if (valid) expect(parseId(s)).toBe(s.toLowerCase());
        else expect(() => parseId(s)).toThrow(InvalidIdError);
      }),
      { numRuns: 5000 },
    );
  });
});
