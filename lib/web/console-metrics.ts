import type { MetricPoint } from '../metrics/emf';
import { METRICS, NAMESPACE, type MetricName } from '../metrics/catalog';
import { byDimension, periods, select, statistic, type Statistic } from '../metrics/stats';
import { countChart, duration, quantileChart } from './charts';
import { cell, tableWrap } from './console-parts';
import { Html, html } from './html';
import type { Ui } from './locale';
import type { FigureKey } from './messages/console-types';
import { hourStart } from '../i18n';

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
  /** Its label's key in the catalogue (messages/console-*.ts `metrics.figure`). */
  label: FigureKey;
  name: MetricName;
  stat: Statistic;
  /** Within the last `windowMs` (one hour by default). */
  windowMs?: number;
  where?: Record<string, string>;
  /** Above this, the figure is marked (an alarm on it would be in ALARM). */
  above?: number;
}

type Points = MetricsView & { points: readonly MetricPoint[] };

function figures(ui: Ui, v: Points, list: Figure[]): Html {
  const m = ui.c.metrics;
  return html`<dl class="figures">${list.map((f) => {
    const windowMs = f.windowMs ?? HOUR;
    const points = select(v.points, f.name, v.now - windowMs, v.now + 1, f.where);
    const value = statistic(
      points.map((p) => p.value),
      f.stat,
    );
    const ms = METRICS[f.name].unit === 'Milliseconds';
    const shown =
      value === undefined ? m.noData : ms ? duration(ui, value) : ui.f.number(Math.round(value * 100) / 100);
    const over = value !== undefined && f.above !== undefined && value > f.above;
    const window = m.window(windowMs >= HOUR ? { hours: windowMs / HOUR } : { minutes: windowMs / 60_000 });
    const flag = over ? m.above({ value: ms ? duration(ui, f.above!) : ui.f.number(f.above!) }) : '';
    return html`<div${over ? html` class="over"` : ''}><dt>${m.figure[f.label]}</dt><dd>${shown}${over ? html` <span class="flag">${flag}</span>` : ''}</dd><dd class="muted">${f.name} · ${f.stat} · ${window}</dd></div>`;
  })}</dl>`;
}

/** 5-minute periods of the last hour, labelled by their start in the configured zone. */
function latencyChart(ui: Ui, v: Points, title: string, name: MetricName): Html {
  const recent = select(v.points, name, v.now - HOUR, v.now + 1);
  const buckets = periods(recent, v.now, FIVE_MIN, 12).map((p) => ({ label: ui.f.hour(p.start), values: p.values }));
  return quantileChart(ui, title, buckets, { upper: 0.99, per: 'five' });
}

function panel(ui: Ui, id: string, window: string, body: (v: Points) => Html, v: MetricsView): Html {
  const points = v.points;
  const m = ui.c.metrics;
  return html`<section class="card" aria-labelledby="${id}"><h2 id="${id}">${m.heading}</h2>${
    points
      ? html`<p class="muted">${m.local({ namespace: NAMESPACE, window })}</p>${body({ ...v, points })}`
      : html`<p class="muted">${m.aws({ namespace: NAMESPACE })}</p>`
  }</section>`;
}

/** The scan gateway: request → envelope, the gateway's own part against its bound, lateness, load. */
export function scanMetricsPanel(ui: Ui, v: MetricsView & { answerBoundMs: number }): Html {
  const words = ui.c.metrics;
  return panel(
    ui,
    'm-scan',
    words.scanWindow({ zone: ui.f.zone(v.now) }),
    (m) =>
      html`${figures(ui, m, [
        { label: 'scanLatency', name: 'ScanLatency', stat: 'p99' },
        { label: 'answerDelay', name: 'ScanAnswerDelay', stat: 'p99', above: v.answerBoundMs },
        { label: 'late', name: 'ScanAnswersLate', stat: 'Sum', above: 0 },
        { label: 'backlog', name: 'ScanBacklog', stat: 'Maximum' },
        { label: 'inflight', name: 'ScanInFlight', stat: 'Maximum' },
      ])}<div class="charts">${latencyChart(ui, m, words.requestToEnvelope, 'ScanLatency')}${latencyChart(
        ui,
        m,
        words.answerToEnvelope,
        'ScanAnswerDelay',
      )}</div>`,
    v,
  );
}

const OUTCOMES = ['succeeded', 'partial', 'failed'] as const;

/** The hourly sync: outcomes per hour, the hour's alarm figure, lateness, T-Bank's limits. */
export function syncMetricsPanel(ui: Ui, v: MetricsView): Html {
  const words = ui.c.metrics;
  return panel(
    ui,
    'm-sync',
    words.syncWindow({ zone: ui.f.zone(v.now) }),
    (m) => {
      const attempts = select(m.points, 'SyncAttempts', m.now - 24 * HOUR, m.now + 1);
      const sum = (points: MetricPoint[]) =>
        statistic(
          points.map((x) => x.value),
          'Sum',
        ) ?? 0;
      // Hours of the configured zone: the chart's bars line up with the times shown beside them.
      const end = hourStart(m.now, ui.f.timeZone) + HOUR;
      const hours = Array.from({ length: 24 }, (_, i) => end - (24 - i) * HOUR).map((start) => ({
        label: ui.f.hour(start),
        counts: OUTCOMES.map((outcome) => sum(select(attempts, 'SyncAttempts', start, start + HOUR, { outcome }))),
      }));
      const causes = byDimension(attempts, 'cause').filter(([cause]) => cause !== 'none');
      const series = OUTCOMES.map((id) => ({ id, label: ui.c.outcome[id] }));
      return html`${figures(ui, m, [
        // Flagged where the AWS alarm fires: ALARM_SYNC_NOT_SUCCEEDED_PER_HOUR, 5 by default (serverless.yml).
        { label: 'notSucceeded', name: 'SyncAttemptsNotSucceeded', stat: 'Sum', above: 4 },
        { label: 'settled', name: 'SyncAttempts', stat: 'Sum' },
        { label: 'lateness', name: 'SyncAttemptLateness', stat: 'Maximum', above: 2 * 60_000 },
        { label: 'rateLimited', name: 'TbankRateLimited', stat: 'Sum', above: 0 },
        { label: 'egressWait', name: 'TbankBudgetWait', stat: 'Sum', where: { budget: 'egress' } },
        { label: 'tokenWait', name: 'TbankBudgetWait', stat: 'Sum', where: { budget: 'token' } },
      ])}<div class="charts"><div>${countChart(ui, words.attemptsPerHour({ zone: ui.f.zone(m.now) }), series, hours, 'hour')}<p class="legend muted">${series.map(
        (o) => html`<span class="swatch s-${o.id}" aria-hidden="true"></span> ${o.label} `,
      )}</p></div><div><p class="muted">${words.causes}</p>${
        causes.length
          ? html`<ul class="plain">${causes.map(([cause, values]) => html`<li><code>${cause}</code> ${values.length}</li>`)}</ul>`
          : html`<p>${words.noCauses}</p>`
      }</div></div>`;
    },
    v,
  );
}

/** What fails quietly: the notifier, the torrent client's logins, async invocations, secrets. */
export function failureMetricsPanel(ui: Ui, v: MetricsView): Html {
  const words = ui.c.metrics;
  return panel(
    ui,
    'm-failures',
    words.failuresWindow({ zone: ui.f.zone(v.now) }),
    (m) => {
      const split = (name: MetricName, dimension: string) =>
        byDimension(select(m.points, name, m.now - HOUR, m.now + 1), dimension);
      const rows: Array<[string, MetricName, Array<[string, number[]]>]> = [
        [words.row.notDelivered, 'NotifierSendFailures', split('NotifierSendFailures', 'outcome')],
        [words.row.loginRefused, 'TorrentLoginRefused', split('TorrentLoginRefused', 'outcome')],
        [words.row.asyncFailed, 'AsyncHandlerFailures', split('AsyncHandlerFailures', 'function')],
        [words.row.secrets, 'SecretsReadFailures', split('SecretsReadFailures', 'function')],
        [words.row.transitions, 'DownloadTransitions', split('DownloadTransitions', 'state')],
      ];
      return html`${figures(ui, m, [
        { label: 'notifierLag', name: 'NotifierLag', stat: 'p99' },
        { label: 'notDelivered', name: 'NotifierSendFailures', stat: 'Sum', above: 0 },
        { label: 'asyncFailed', name: 'AsyncHandlerFailures', stat: 'Sum', above: 0 },
        { label: 'loginRefused', name: 'TorrentLoginRefused', stat: 'Sum', above: 0 },
      ])}<div class="charts">${latencyChart(ui, m, words.notifierLag, 'NotifierLag')}${tableWrap(
        ui,
        html`<table class="list"><caption>${words.byDimension}</caption>
<thead><tr><th scope="col">${words.col.metric}</th><th scope="col">${words.col.by}</th></tr></thead><tbody>${rows.map(
          ([label, name, groups]) =>
            html`<tr>${cell(words.col.metric, html`<span>${label}<br><code class="muted">${name}</code></span>`)}${cell(
              words.col.by,
              groups.length
                ? html`<span>${groups.map(([key, values]) => html`<code>${key}</code> ${values.reduce((a, b) => a + b, 0)} `)}</span>`
                : html`<span class="muted">${ui.c.none}</span>`,
            )}</tr>`,
        )}</tbody></table>`,
      )}</div>`;
    },
    v,
  );
}
