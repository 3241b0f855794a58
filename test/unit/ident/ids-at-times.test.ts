import fc from 'fast-check';
import { idsAtTimes, idTime, parseId } from '../../../lib/ident';

describe('idsAtTimes', () => {
  it('gives each id the time it was asked for, and keeps call order among ids of one time, whatever order the times come in', () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 200 }), (offsets) => {
        const mint = idsAtTimes();
        const base = 1_600_000_000_000;
        const ids = offsets.map((o) => ({ time: base + o * 1000, id: mint(base + o * 1000) }));
        for (const { time, id } of ids) {
          expect(parseId(id)).toBe(id);
          expect(idTime(id)).toBe(time);
        }
        for (let i = 0; i < ids.length; i++) {
          for (let j = i + 1; j < ids.length; j++) {
            if (ids[i].time === ids[j].time) expect(ids[i].id < ids[j].id).toBe(true);
            else expect(ids[i].id < ids[j].id).toBe(ids[i].time < ids[j].time);
          }
        }
      }),
    );
  });

  it('mints the same ids again from a deterministic start (a re-run plans what a killed run planned)', () => {
    const start = (t: number) => BigInt(t) * 7919n;
    const times = [5000, 5000, 3000, 5000, 3000];
    expect(times.map(idsAtTimes(start))).toEqual(times.map(idsAtTimes(start)));
  });

  it('does not overflow into the time part, even from the largest start', () => {
    const mint = idsAtTimes(() => (1n << 80n) - 1n);
    const first = mint(1000);
    const next = mint(1000);
    expect(idTime(next)).toBe(1000);
    expect(next > first).toBe(true);
  });

  it('refuses a time a ULID cannot hold', () => {
    const mint = idsAtTimes();
    for (const bad of [-1, 1.5, 2 ** 48, NaN]) expect(() => mint(bad)).toThrow(RangeError);
  });
});
