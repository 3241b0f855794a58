import type { MetricPoint } from '../metrics/emf';
import { METRICS, NAMESPACE, type MetricName } from '../metrics/catalog';
import { byDimension, periods, select, statistic, type Statistic } from '../metrics/stats';
import { countChart, duration, quantileChart } from './charts';
import { Html, html } from './html';

/**
 * The console's metrics panels: on each list page the metrics of its domain,
 * computed as CloudWatch would from the EMF lines the functions wrote
 * (lib/metrics/local.ts), with the statistic an alarm reads: what a developer
 * sees locally is what an alarm would see. /scan: latency, lateness, backlog;
 * /sync: outcomes, lateness, T-Bank limits; /failures: the notifier, the
 * torrent client's logins, failed async invocations and unreadable secrets.
 * On AWS there is no local log: the panel points at CloudWatch.
 */

export interface MetricsView {
  /** The data points read back, oldest first; undefined where no local log exists (AWS). */
  points?: readonly MetricPoint[];
  now: number;
}

const HOUR = 3600_000;
const FIVE_MIN = 300_000;

interface Figure {
  label: string;
  name: MetricName;
  stat: Statistic;
  /** Within the last `windowMs` (one hour by default). */
  windowMs?: number;
  where?: Record<string, string>;
  /** Above this, the figure is marked (an alarm on it would be in ALARM). */
  above?: number;
}

function figures(v: MetricsView & { points: readonly MetricPoint[] }, list: Figure[]): Html {
  return html`<dl class="figures">${list.map((f) => {
    const windowMs = f.windowMs ?? HOUR;
    const points = select(v.points, f.name, v.now - windowMs, v.now + 1, f.where);
    const value = statistic(
      points.map((p) => p.value),
      f.stat,
    );
    const ms = METRICS[f.name].unit === 'Milliseconds';
    const shown = value === undefined ? 'no data' : ms ? duration(value) : String(Math.round(value * 100) / 100);
    const over = value !== undefined && f.above !== undefined && value > f.above;
    return html`<div${over ? html` class="over"` : ''}><dt>${f.label}</dt><dd>${shown}${over ? html` <span class="flag">above ${ms ? duration(f.above!) : f.above}</span>` : ''}</dd><dd class="muted">${f.name} · ${f.stat} · ${windowMs >= HOUR ? `${windowMs / HOUR} h` : `${windowMs / 60_000} min`}</dd></div>`;
  })}</dl>`;
}

function latencyChart(v: MetricsView & { points: readonly MetricPoint[] }, title: string, name: MetricName): Html {
  const recent = select(v.points, name, v.now - HOUR, v.now + 1);
  const buckets = periods(recent, v.now, FIVE_MIN, 12).map((p) => ({
    label: new Date(p.start).toISOString().slice(11, 16),
    values: p.values,
  }));
  return quantileChart(title, buckets, { upper: 0.99, per: '5 minutes', unit: 'values' });
}

function panel(
  id: string,
  window: string,
  body: (v: MetricsView & { points: readonly MetricPoint[] }) => Html,
  v: MetricsView,
): Html {
  const points = v.points;
  return html`<section class="card" aria-labelledby="${id}"><h2 id="${id}">Metrics: what the alarms see</h2>${
    points
      ? html`<p class="muted">Computed from the EMF lines the functions wrote (namespace <code>${NAMESPACE}</code>), with each alarm's statistic. ${window}</p>${body({ ...v, points })}`
      : html`<p class="muted">On AWS these are CloudWatch metrics in namespace <code>${NAMESPACE}</code>: the service's dashboard shows them and its alarms watch them (docs/operations.md, Metrics).</p>`
  }</section>`;
}

/** The scan gateway: request → envelope, the gateway's own part against its bound, lateness, load. */
export function scanMetricsPanel(v: MetricsView & { answerBoundMs: number }): Html {
  return panel(
    'm-scan',
    'Figures: the last hour. Charts: 5-minute periods, UTC.',
    (m) =>
      html`${figures(m, [
        { label: 'Request → envelope, p99', name: 'ScanLatency', stat: 'p99' },
        { label: 'Answer seen → envelope, p99', name: 'ScanAnswerDelay', stat: 'p99', above: v.answerBoundMs },
        { label: 'Envelopes after the deadline', name: 'ScanAnswersLate', stat: 'Sum', above: 0 },
        { label: 'Waiting for a slot, max', name: 'ScanBacklog', stat: 'Maximum' },
        { label: 'Slots held, max', name: 'ScanInFlight', stat: 'Maximum' },
      ])}<div class="charts">${latencyChart(m, 'Request → envelope (median bar, p99 tick)', 'ScanLatency')}${latencyChart(
        m,
        'Answer seen → envelope (median bar, p99 tick)',
        'ScanAnswerDelay',
      )}</div>`,
    v,
  );
}

const OUTCOMES = ['succeeded', 'partial', 'failed'] as const;

/** The hourly sync: outcomes per hour, the hour's alarm figure, lateness, T-Bank's limits. */
export function syncMetricsPanel(v: MetricsView): Html {
  return panel(
    'm-sync',
    'Figures: the last hour. Chart and causes: the last 24 hours, by hour, UTC.',
    (m) => {
      const attempts = select(m.points, 'SyncAttempts', m.now - 24 * HOUR, m.now + 1);
      const sum = (points: MetricPoint[]) =>
        statistic(
          points.map((x) => x.value),
          'Sum',
        ) ?? 0;
      const hours = periods([], m.now, HOUR, 24).map(({ start }) => ({
        label: `${new Date(start).getUTCHours()}h`,
        counts: OUTCOMES.map((outcome) => sum(select(attempts, 'SyncAttempts', start, start + HOUR, { outcome }))),
      }));
      const causes = byDimension(attempts, 'cause').filter(([cause]) => cause !== 'none');
      return html`${figures(m, [
        // Flagged where the AWS alarm fires: ALARM_SYNC_NOT_SUCCEEDED_PER_HOUR, 5 by default (serverless.yml).
        { label: 'Attempts not succeeded', name: 'SyncAttemptsNotSucceeded', stat: 'Sum', above: 4 },
        { label: 'Attempts settled', name: 'SyncAttempts', stat: 'Sum' },
        {
          label: 'Latest start against its hour, max',
          name: 'SyncAttemptLateness',
          stat: 'Maximum',
          above: 2 * 60_000,
        },
        { label: 'T-Bank 429s', name: 'TbankRateLimited', stat: 'Sum', above: 0 },
        { label: 'Waits for the egress budget', name: 'TbankBudgetWait', stat: 'Sum', where: { budget: 'egress' } },
        { label: 'Waits for tokens\u2019 budgets', name: 'TbankBudgetWait', stat: 'Sum', where: { budget: 'token' } },
      ])}<div class="charts"><div>${countChart('Attempts per hour by outcome, UTC', OUTCOMES, hours, 'hour')}<p class="legend muted">${OUTCOMES.map(
        (o) => html`<span class="swatch s-${o}" aria-hidden="true"></span> ${o} `,
      )}</p></div><div><p class="muted">Causes in the last 24 hours</p>${
        causes.length
          ? html`<ul class="plain">${causes.map(([cause, values]) => html`<li><code>${cause}</code> ${values.length}</li>`)}</ul>`
          : html`<p>None: every attempt settled without a problem.</p>`
      }</div></div>`;
    },
    v,
  );
}

/** What fails quietly: the notifier, the torrent client's logins, async invocations, secrets. */
export function failureMetricsPanel(v: MetricsView): Html {
  return panel(
    'm-failures',
    'Figures and table: the last hour. Chart: 5-minute periods, UTC.',
    (m) => {
      const split = (name: MetricName, dimension: string) =>
        byDimension(select(m.points, name, m.now - HOUR, m.now + 1), dimension);
      const rows: Array<[string, MetricName, Array<[string, number[]]>]> = [
        ['Notifications not delivered', 'NotifierSendFailures', split('NotifierSendFailures', 'outcome')],
        ['Torrent-client logins refused', 'TorrentLoginRefused', split('TorrentLoginRefused', 'outcome')],
        ['Async invocations failed', 'AsyncHandlerFailures', split('AsyncHandlerFailures', 'function')],
        ['Secrets unreadable', 'SecretsReadFailures', split('SecretsReadFailures', 'function')],
        ['Downloads entering a state', 'DownloadTransitions', split('DownloadTransitions', 'state')],
      ];
      return html`${figures(m, [
        { label: 'Notifier lag, p99', name: 'NotifierLag', stat: 'p99' },
        { label: 'Notifications not delivered', name: 'NotifierSendFailures', stat: 'Sum', above: 0 },
        { label: 'Async invocations failed', name: 'AsyncHandlerFailures', stat: 'Sum', above: 0 },
        { label: 'Torrent-client logins refused', name: 'TorrentLoginRefused', stat: 'Sum', above: 0 },
      ])}<div class="charts">${latencyChart(m, 'Notifier lag (median bar, p99 tick)', 'NotifierLag')}<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table class="list"><caption>The last hour, by dimension</caption>
<thead><tr><th scope="col">Metric</th><th scope="col">By</th></tr></thead><tbody>${rows.map(
        ([label, name, groups]) =>
          html`<tr><td>${label}<br><code class="muted">${name}</code></td><td>${
            groups.length
              ? groups.map(([key, values]) => html`<code>${key}</code> ${values.reduce((a, b) => a + b, 0)} `)
              : html`<span class="muted">none</span>`
          }</td></tr>`,
      )}</tbody></table></div></div>`;
    },
    v,
  );
}
