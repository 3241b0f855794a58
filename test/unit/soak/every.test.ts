import { every } from '../../../tools/soak/load/http';

describe('the load loop', () => {
  it('steps at its rate, goes on after a failed step, and never sleeps past the deadline', async () => {
    let now = 0;
    const steps: number[] = [];
    await every(
      60_000,
      { until: 90_000 },
      () => now,
      async (ms) => void (now += ms),
      async () => {
        steps.push(now);
        now += 1000;
        if (steps.length === 1) throw new Error('a failed step');
      },
    );
    expect(steps).toEqual([0, 60_000]);
    expect(now).toBe(90_000);
  });

  it('a deadline moved earlier (the stack stopped itself) ends the loop at the next step', async () => {
    let now = 0;
    const deadline = { until: 600_000 };
    let steps = 0;
    await every(
      10_000,
      deadline,
      () => now,
      async (ms) => void (now += ms),
      async () => {
        if (++steps === 3) deadline.until = now;
      },
    );
    expect(steps).toBe(3);
  });
});
