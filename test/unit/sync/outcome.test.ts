import { barrierReached, deriveOutcome, finishedBefore } from '../../../lib/sync/outcome';
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
    // catalog.enrichment has no row: DISPATCH_FAILED; operations still running at settle: DEADLINE.
    expect(deriveOutcome({ head, rows })).toMatchObject({
      state: 'partial',
      error_code: 'DEADLINE',
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
