import { syncMetricsPanel } from '../../../lib/web/console-metrics';
import { uiOf } from '../../../lib/web/locale';
import type { MetricPoint } from '../../../lib/metrics/emf';

const NOW = Date.parse('2026-12-06T12:00:00Z');
const notSucceeded = (n: number): MetricPoint[] =>
  Array.from({ length: n }, (_, i) => ({
    name: 'SyncAttemptsNotSucceeded',
    unit: 'Count',
    value: 1,
    timestamp: NOW - (i + 1) * 60_000,
    dimensions: { service: 'torrent-scan-sync', stage: 'dev', domain: 'sync' },
  }));

/** The figure's <div> as rendered: whether it carries the `over` mark. */
function marked(points: MetricPoint[]): boolean {
  const text = String(syncMetricsPanel(uiOf('en', 'UTC'), { points, now: NOW }));
  const figure = /<div( class="([^"]*)")?><dt>Attempts not succeeded<\/dt>/.exec(text);
  expect(figure).not.toBeNull();
  return (figure![2] ?? '').split(' ').includes('over');
}

describe('the sync metrics panel', () => {
  it('marks attempts not succeeded exactly where the AWS alarm fires (5 in the hour by default)', () => {
    expect(marked(notSucceeded(4))).toBe(false);
    expect(marked(notSucceeded(5))).toBe(true);
  });
});
