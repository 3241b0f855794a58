import fc from 'fast-check';
import { newId } from '../../../lib/ident';
import { encodeCallback, MAX_CALLBACK_BYTES, parseCallback } from '../../../lib/telegram/callback';
import { StaleButtonError } from '../../../lib/telegram/errors';

describe('callback_data', () => {
  it('round-trips every action within 64 bytes', () => {
    const id = newId();
    for (const action of ['retry', 'cancel', 'open'] as const) {
      const data = encodeCallback(action, id);
      expect(Buffer.byteLength(data)).toBeLessThanOrEqual(MAX_CALLBACK_BYTES);
      expect(parseCallback(data)).toEqual({ action, id });
    }
  });

  it('reads an upper-case id as the same id (parseId normalises)', () => {
    const id = newId();
    expect(parseCallback(`v1:r:${id.toUpperCase()}`)).toEqual({ action: 'retry', id });
  });

  it.each([
    ['the old numeric format', 'retry:123'],
    ['a numeric id in the new format', 'v1:r:123'],
    ['an unknown version', `v2:r:${'0'.repeat(26)}`],
    ['an unknown action', `v1:x:${'0'.repeat(26)}`],
    ['an id with a forbidden letter', `v1:r:${'u'.repeat(26)}`],
    ['extra parts', `v1:r:${'0'.repeat(26)}:x`],
    ['empty', ''],
    ['over 64 bytes', `v1:r:${'0'.repeat(70)}`],
    ['not a string', 42],
  ])('refuses %s as a stale button', (_name, data) => {
    expect(() => parseCallback(data)).toThrow(StaleButtonError);
  });

  it('never throws anything but StaleButtonError on arbitrary input', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (data) => {
        try {
          parseCallback(data);
        } catch (err) {
          expect(err).toBeInstanceOf(StaleButtonError);
        }
      }),
    );
  });
});
