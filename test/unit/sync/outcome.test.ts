import { newId } from '../../../lib/ident';
import { barrierReached, deriveOutcome, finishedBefore, newStepId, readyToDispatch } from '../../../lib/sync/outcome';
import { MANDATORY_SECTIONS, Section, StepRow } from '../../../lib/sync/model';

const children = Object.fromEntries(MANDATORY_SECTIONS.map((s, i) => [s, `step-${i}`])) as Record<Section, string>;
const row = (section: Section, state: StepRow['state'], extra: Partial<StepRow> = {}): StepRow => ({
  attempt_id: 'a',
  step_id: children[section],
  section,
  state,
  started_at: 0,
  finished_at: state === 'running' ? undefined : 10,
  ...extra,
});
const all = (state: StepRow['state']) => MANDATORY_SECTIONS.map((s) => row(s, state));
const head = { walk_completed: true, children, started_at: 0 };

describe('deriveOutcome', () => {
  it('succeeded only with every step succeeded, the walk completed and no cause', () => {
    expect(deriveOutcome({ head, rows: all('succeeded') })).toMatchObject({
      state: 'succeeded',
      error_code: undefined,
    });
    expect(deriveOutcome({ head: { ...head, walk_completed: false }, rows: all('succeeded') })).toMatchObject({
      state: 'partial',
      error_code: 'INTERRUPTED',
    });
    expect(deriveOutcome({ head, rows: all('succeeded'), cause: 'INTERRUPTED' })).toMatchObject({
      state: 'partial',
      error_code: 'INTERRUPTED',
    });
  });

  it('partial when some succeeded, failed when none did; codes by precedence', () => {
    const rows = [
      row('portfolio', 'failed', { error_code: 'UPSTREAM_ERROR' }),
      row('operations', 'running'),
      row('events.refresh', 'succeeded'),
    ];
    // catalog.enrichment has no row: DISPATCH_FAILED; operations still running at settle: DEADLINE, a step's
    // code that ranks in section order: portfolio's own code comes first.
    expect(deriveOutcome({ head, rows })).toMatchObject({
      state: 'partial',
      error_code: 'UPSTREAM_ERROR',
      sections: {
        portfolio: { state: 'failed' },
        operations: { state: 'expired' },
        'catalog.enrichment': { state: 'missing' },
      },
    });
    expect(
      deriveOutcome({ head, rows: all('failed').map((r) => ({ ...r, error_code: 'UNAUTHORIZED' })) }),
    ).toMatchObject({ state: 'failed', error_code: 'UNAUTHORIZED' });
    expect(deriveOutcome({ head, rows: [], cause: 'ACCESS_DENIED' })).toMatchObject({
      state: 'failed',
      error_code: 'ACCESS_DENIED',
    });
  });

  it('DEADLINE never hides an earlier section’s cause, and is the code when it comes first', () => {
    const late = [row('portfolio', 'failed', { error_code: 'TOKEN_INVALID' }), row('operations', 'running')];
    expect(deriveOutcome({ head, rows: [...late, row('events.refresh', 'succeeded')] }).error_code).toBe(
      'TOKEN_INVALID',
    );
    const first = [row('portfolio', 'running'), row('operations', 'failed', { error_code: 'TOKEN_INVALID' })];
    expect(deriveOutcome({ head, rows: first }).error_code).toBe('DEADLINE');
    // The attempt's own cause still outranks every section.
    expect(deriveOutcome({ head, rows: late, cause: 'INTERRUPTED' }).error_code).toBe('INTERRUPTED');
  });

  describe('a late step keeps its result until the outcome is fixed (decision 363)', () => {
    const BOUND = 60_000;
    const t0 = Date.parse('2026-12-06T10:00:00Z');
    // Real step ids: each carries its dispatch instant, from which its own wait bound runs.
    const ids = Object.fromEntries(MANDATORY_SECTIONS.map((s) => [s, newStepId(t0)])) as Record<Section, string>;
    const timed = { walk_completed: true, children: ids, started_at: t0 };
    const done = (section: Section, state: StepRow['state'], finishedAt?: number, code?: string): StepRow => ({
      attempt_id: 'a',
      step_id: ids[section],
      section,
      state,
      started_at: t0,
      ...(finishedAt !== undefined ? { finished_at: finishedAt } : {}),
      ...(code ? { error_code: code } : {}),
    });
    const others = (['operations', 'events.refresh', 'catalog.enrichment'] as const).map((s) =>
      done(s, 'succeeded', t0 + 1000),
    );

    it('settled first: the hung step still running is expired, DEADLINE', () => {
      const rows = [done('portfolio', 'running'), ...others];
      expect(deriveOutcome({ head: timed, rows })).toMatchObject({
        state: 'partial',
        error_code: 'DEADLINE',
        sections: { portfolio: { state: 'expired' } },
      });
    });

    it('published first, after its wait bound: a success is a success, a failure keeps its own code', () => {
      // Seed 003: a late publication of the current attempt's step holds until the outcome is fixed.
      const late = [done('portfolio', 'succeeded', t0 + BOUND + 5), ...others];
      expect(deriveOutcome({ head: timed, rows: late })).toMatchObject({
        state: 'succeeded',
        sections: { portfolio: { state: 'succeeded' } },
      });
      const failed = [done('portfolio', 'failed', t0 + BOUND + 5, 'STEP_TIMEOUT'), ...others];
      expect(deriveOutcome({ head: timed, rows: failed })).toMatchObject({
        state: 'partial',
        error_code: 'STEP_TIMEOUT',
        sections: { portfolio: { state: 'failed', error_code: 'STEP_TIMEOUT' } },
      });
    });

    it('the first problem in section order is the code, DEADLINE like any other', () => {
      const first = [done('portfolio', 'failed', t0 + 10, 'TOKEN_INVALID'), done('operations', 'running')];
      expect(deriveOutcome({ head: timed, rows: first }).error_code).toBe('TOKEN_INVALID');
      const hung = [done('portfolio', 'running'), done('operations', 'failed', t0 + 10, 'TOKEN_INVALID')];
      expect(deriveOutcome({ head: timed, rows: hung }).error_code).toBe('DEADLINE');
    });
  });

  it('ignores a row whose step id was never recorded on the attempt', () => {
    const stray = MANDATORY_SECTIONS.map((s) => row(s, 'succeeded', { step_id: 'other' }));
    expect(deriveOutcome({ head, rows: stray }).state).toBe('failed');
  });
});

describe('barrierReached', () => {
  it('waits for every dispatched step, until the wait bound', () => {
    const rows = [...all('succeeded').slice(0, 3), row('catalog.enrichment', 'running')];
    expect(barrierReached(head, rows, 1000, 5000)).toBe(false);
    expect(barrierReached(head, rows, 5000, 5000)).toBe(true);
    expect(barrierReached(head, all('failed'), 1000, 5000)).toBe(true);
    expect(barrierReached({ ...head, walk_completed: false }, all('succeeded'), 9999, 5000)).toBe(false);
  });

  it('the bound is per step, from that step’s dispatch (its ULID’s time), not from the attempt’s start', () => {
    const MIN = 60_000;
    const bound = 15 * MIN;
    const t0 = Date.UTC(2026, 11, 4, 12, 0, 0);
    const ids = {
      portfolio: newId(t0),
      operations: newId(t0),
      'events.refresh': newId(t0),
      'catalog.enrichment': newId(t0 + 14 * MIN), // dispatched when a slow first phase finished
    } as Record<Section, string>;
    const h = { walk_completed: true, children: ids, started_at: t0 };
    const done = (s: Section, at: number): StepRow => ({
      attempt_id: 'a',
      step_id: ids[s],
      section: s,
      state: 'succeeded',
      started_at: t0,
      finished_at: at,
    });
    const rows = [
      done('portfolio', t0 + 14 * MIN),
      done('operations', t0 + 14 * MIN),
      done('events.refresh', t0 + MIN),
      { ...done('catalog.enrichment', 0), state: 'running' as const, finished_at: undefined },
    ];
    expect(barrierReached(h, rows, t0 + 16 * MIN, bound)).toBe(false); // past start + bound, within its own
    expect(barrierReached(h, rows, t0 + 29 * MIN, bound)).toBe(true);
    // Not yet dispatched: its window opens when its dependencies finish, whatever the attempt's age.
    const { 'catalog.enrichment': _c, ...firstPhase } = ids;
    const walked = { ...h, children: firstPhase };
    expect(readyToDispatch(walked, rows.slice(0, 3), t0 + 20 * MIN, bound)).toEqual(['catalog.enrichment']);
    expect(barrierReached(walked, rows.slice(0, 3), t0 + 20 * MIN, bound)).toBe(false);
    // Nobody sent it within a bound of the last dependency's finish: the window closes and the barrier is reached.
    expect(readyToDispatch(walked, rows.slice(0, 3), t0 + 29 * MIN, bound)).toEqual([]);
    expect(barrierReached(walked, rows.slice(0, 3), t0 + 29 * MIN, bound)).toBe(true);
    // A dependency still running holds the dependent open only until its own bound.
    const slow = [{ ...rows[0], state: 'running' as const, finished_at: undefined }, ...rows.slice(1, 3)];
    expect(barrierReached(walked, slow, t0 + 14 * MIN, bound)).toBe(false);
    expect(barrierReached(walked, slow, t0 + 15 * MIN, bound)).toBe(true);
  });

  it('does not wait for a section that was never dispatched', () => {
    const { portfolio: _gone, ...rest } = children;
    expect(barrierReached({ ...head, children: rest }, all('succeeded').slice(1), 1000, 5000)).toBe(true);
  });

  it('finishedBefore: all dispatched steps done before the instant', () => {
    expect(finishedBefore(head, all('succeeded'), 11)).toBe(true);
    expect(finishedBefore(head, all('succeeded'), 10)).toBe(false);
    expect(finishedBefore(head, [...all('succeeded').slice(1), row('portfolio', 'running')], 100)).toBe(false);
  });
});
