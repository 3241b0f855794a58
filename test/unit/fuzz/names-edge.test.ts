import fc from 'fast-check';
import { InvalidFileNameError, validateName } from '../../../lib/names';

/**
 * Fuzz of the name rules' edges (issue 11): lone surrogates, wildcards and
 * Windows device names padded the way Windows ignores. The oracle is written
 * from the rule itself (the stem before the first dot, trailing spaces
 * dropped, compared without case), not from validateName's regex.
 */
const RUNS = 10_000;

const DEVICES = [
  'CON',
  'PRN',
  'AUX',
  'NUL',
  'CONIN$',
  'CONOUT$',
  ...[...'0123456789¹²³'].flatMap((d) => [`COM${d}`, `LPT${d}`]),
];

function isDevice(name: string): boolean {
  const stem = name.split('.')[0].replace(/ +$/, '').toUpperCase();
  return DEVICES.includes(stem);
}

const wellFormed = (s: string) => Buffer.from(s, 'utf8').toString('utf8') === s;

/** Accepted, or refused with InvalidFileNameError; nothing else. */
function judge(name: string): boolean {
  try {
    validateName(name);
    return true;
  } catch (err) {
    if (!(err instanceof InvalidFileNameError)) throw err;
    return false;
  }
}

const randomCase = (s: string) =>
  fc
    .array(fc.boolean(), { minLength: s.length, maxLength: s.length })
    .map((up) => [...s].map((c, i) => (up[i] ? c.toUpperCase() : c.toLowerCase())).join(''));
const padding = fc.array(fc.constantFrom(' ', '.'), { maxLength: 4 }).map((p) => p.join(''));
const extension = fc.oneof(fc.constant(''), fc.stringMatching(/^(\.[a-z ]{0,4}){1,2}$/));
const deviceLike = fc
  .tuple(
    fc.constantFrom(...DEVICES).chain(randomCase),
    padding,
    extension,
    padding,
    fc.constantFrom('', 'x', '0', ' x'),
  )
  .map((parts) => parts.join(''));
const surrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((c) => String.fromCharCode(c));
const withOdd = fc
  .tuple(
    fc.string({ maxLength: 20 }),
    fc.oneof(surrogate, fc.constantFrom('*', '?', '<', '>', '"', '\ud83d\ude00')),
    fc.string({ maxLength: 20 }),
  )
  .map((p) => p.join(''));

describe('names at the edge (fuzz)', () => {
  it(`refuses exactly the device names Windows would open, padded or not (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(deviceLike, (name) => {
        if (name.startsWith('.')) return;
        expect(judge(name)).toBe(!isDevice(name));
      }),
      { numRuns: RUNS },
    );
  });

  it(`never accepts a lone surrogate or a wildcard (${RUNS} cases)`, () => {
    fc.assert(
      fc.property(fc.oneof(withOdd, fc.string({ unit: 'binary', maxLength: 40 })), (name) => {
        if (judge(name)) {
          expect(wellFormed(name)).toBe(true);
          expect(name).not.toMatch(/[*?]/);
          expect(isDevice(name)).toBe(false);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it.each([
    ['a trailing space after a device', 'CON '],
    ['a space before the extension', 'CON .txt'],
    ['dots and spaces before the extension', 'nul. .tar.gz'],
    ['a superscript port, padded', 'LPT¹ .log'],
    ['a lone high surrogate', 'report\ud800.pdf'],
    ['a lone low surrogate', '\udc00report.pdf'],
    ['reversed surrogates', 'a\udc00\ud800.pdf'],
    ['a star', 'season*.mkv'],
    ['a question mark', 'what?.pdf'],
  ])('refuses %s', (_what, name) => {
    expect(() => validateName(name)).toThrow(InvalidFileNameError);
  });

  it('accepts names that only look close', () => {
    for (const name of [
      'a<b>"c.pdf',
      'Sintel <b> & co',
      'CONSOLE.txt',
      'COM10.pdf',
      'con sole.pdf',
      'NUL_report',
      'emoji \ud83d\ude00.pdf',
      'a.CON',
      'x CON .txt',
    ])
      expect(validateName(name)).toBe(name);
  });
});
