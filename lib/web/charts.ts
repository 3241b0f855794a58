import { Html, html } from './html';
import type { Ui } from './locale';

/**
 * Charts as inline SVG, drawn on the server from the page's own data: no
 * chart library, nothing fetched by the browser. Every chart carries a text
 * equivalent (its `<title>` and a visually hidden table) for screen readers.
 */

/** The value at quantile q (0..1) of sorted numbers, nearest rank; undefined for none. */
export function quantile(sorted: readonly number[], q: number): number | undefined {
  if (sorted.length === 0) return undefined;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))];
}

export interface Bucket {
  /** The bucket's label on the x axis (e.g. "14h"). */
  label: string;
  values: number[];
}

const number = (ui: Ui, n: number, digits: number) =>
  new Intl.NumberFormat(ui.f.locale, { minimumFractionDigits: digits, maximumFractionDigits: digits }).format(n);

/** A duration as people read it, in the page's language: 850 ms, 12.4 s, 3.2 min, 1.5 h (12,4 с in Russian). */
export function duration(ui: Ui, ms: number): string {
  const u = ui.c.unit;
  if (ms < 1000) return `${number(ui, Math.round(ms), 0)} ${u.ms}`;
  if (ms < 60_000) return `${number(ui, ms / 1000, 1)} ${u.s}`;
  if (ms < 3600_000) return `${number(ui, ms / 60_000, 1)} ${u.min}`;
  return `${number(ui, ms / 3600_000, 1)} ${u.h}`;
}

const W = 288;
const H = 96;
const PAD_TOP = 14;
const PAD_BOTTOM = 14;

export interface QuantileOptions {
  /** The upper quantile drawn as a tick: 0.9 (the console's phase times) or 0.99 (an alarm's p99). */
  upper?: 0.9 | 0.99;
  /** What one bucket is: an hour (the default) or 5 minutes. */
  per?: 'hour' | 'five';
}

/**
 * Median (bar) and p90 or p99 (tick) per bucket, one small chart: buckets
 * without values draw nothing. The y scale is the largest upper quantile,
 * labelled at the top.
 */
export function quantileChart(ui: Ui, title: string, buckets: readonly Bucket[], opts: QuantileOptions = {}): Html {
  const words = ui.c.chart;
  const upper = opts.upper ?? 0.9;
  const name = upper === 0.99 ? 'p99' : 'p90';
  const per = opts.per ?? 'hour';
  const stats = buckets.map((b) => {
    const sorted = [...b.values].sort((x, y) => x - y);
    return { label: b.label, n: sorted.length, median: quantile(sorted, 0.5), high: quantile(sorted, upper) };
  });
  const top = Math.max(1, ...stats.map((s) => s.high ?? 0));
  const slot = W / Math.max(1, stats.length);
  const y = (v: number) => PAD_TOP + (H - PAD_TOP - PAD_BOTTOM) * (1 - v / top);
  const base = H - PAD_BOTTOM;
  const marks = stats.map((s, i) => {
    if (s.median === undefined || s.high === undefined) return '';
    const x = i * slot + slot * 0.15;
    const w = Math.max(1, slot * 0.7);
    return html`<rect class="bar" x="${x.toFixed(1)}" y="${y(s.median).toFixed(1)}" width="${w.toFixed(1)}" height="${(base - y(s.median)).toFixed(1)}"></rect><line class="p90" x1="${x.toFixed(1)}" x2="${(x + w).toFixed(1)}" y1="${y(s.high).toFixed(1)}" y2="${y(s.high).toFixed(1)}"></line>`;
  });
  const seen = stats.filter((s) => s.n > 0);
  const summary = seen.length
    ? words.quantileSummary({ title, per, upper: upper === 0.99 ? 99 : 90, highest: duration(ui, top) })
    : words.none({ title });
  return html`<figure class="chart"><figcaption>${title}</figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${summary}" preserveAspectRatio="none"><title>${summary}</title>
<line class="axisline" x1="0" x2="${W}" y1="${base}" y2="${base}"></line>
<text class="axis" x="2" y="10">${duration(ui, top)}</text>${marks}${ticks(stats, slot)}</svg>
<table class="visually-hidden"><caption>${words.caption({ title, per })}</caption><thead><tr><th scope="col">${words.bucket[per]}</th><th scope="col">${words.count}</th><th scope="col">${words.median}</th><th scope="col">${name}</th></tr></thead><tbody>${seen.map(
    (s) =>
      html`<tr><td>${s.label}</td><td>${s.n}</td><td>${duration(ui, s.median!)}</td><td>${duration(ui, s.high!)}</td></tr>`,
  )}</tbody></table></figure>`;
}

/** Every sixth bucket's label under the axis. */
function ticks(stats: ReadonlyArray<{ label: string }>, slot: number): Html[] {
  return stats.map((s, i) =>
    i % 6 === 0
      ? html`<text class="axis" x="${(i * slot + slot / 2).toFixed(1)}" y="${H - 2}" text-anchor="middle">${s.label}</text>`
      : html``,
  );
}

export interface CountBucket {
  label: string;
  /** Count per series, in the series' order. */
  counts: number[];
}

/**
 * Counts per bucket as stacked bars, one colour per series (each with a class
 * `s-<id>` the page styles, and its label in the page's language); the text
 * equivalent is a table of every bucket with counts.
 */
export function countChart(
  ui: Ui,
  title: string,
  series: ReadonlyArray<{ id: string; label: string }>,
  buckets: readonly CountBucket[],
  per: 'hour' | 'five',
): Html {
  const words = ui.c.chart;
  const totals = buckets.map((b) => b.counts.reduce((a, c) => a + c, 0));
  const top = Math.max(1, ...totals);
  const slot = W / Math.max(1, buckets.length);
  const scale = (H - PAD_TOP - PAD_BOTTOM) / top;
  const base = H - PAD_BOTTOM;
  const bars = buckets.map((b, i) => {
    let y = base;
    const x = i * slot + slot * 0.15;
    const w = Math.max(1, slot * 0.7);
    return b.counts.map((c, k) => {
      if (c <= 0) return html``;
      y -= c * scale;
      return html`<rect class="s-${series[k].id}" x="${x.toFixed(1)}" y="${y.toFixed(1)}" width="${w.toFixed(1)}" height="${(c * scale).toFixed(1)}"></rect>`;
    });
  });
  const seen = buckets.filter((_, i) => totals[i] > 0);
  const summary = seen.length ? words.countSummary({ title, per, top }) : words.none({ title });
  return html`<figure class="chart"><figcaption>${title}</figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${summary}" preserveAspectRatio="none"><title>${summary}</title>
<line class="axisline" x1="0" x2="${W}" y1="${base}" y2="${base}"></line>
<text class="axis" x="2" y="10">${top}</text>${bars}${ticks(buckets, slot)}</svg>
<table class="visually-hidden"><caption>${words.caption({ title, per })}</caption><thead><tr><th scope="col">${words.bucket[per]}</th>${series.map(
    (s) => html`<th scope="col">${s.label}</th>`,
  )}</tr></thead><tbody>${seen.map(
    (b) => html`<tr><td>${b.label}</td>${b.counts.map((c) => html`<td>${c}</td>`)}</tr>`,
  )}</tbody></table></figure>`;
}

export interface AmountBucket {
  label: string;
  /** An exact decimal (the sum of the bucket's amounts); its text is shown as it is. */
  value: string;
}

/**
 * Amounts per bucket as bars (expected payments per month): heights are
 * proportions of the largest bucket (a float is fine for a pixel), every
 * label and the text equivalent are the exact amounts, formatted.
 */
export function amountChart(
  title: string,
  buckets: readonly AmountBucket[],
  format: (value: string) => string,
  words: { summary: string; bucket: string; amount: string },
): Html {
  const values = buckets.map((b) => Math.max(0, Number(b.value)));
  const top = Math.max(...values, 0);
  const slot = W / Math.max(1, buckets.length);
  const base = H - PAD_BOTTOM;
  const height = (v: number) => (top > 0 ? ((H - PAD_TOP - PAD_BOTTOM) * v) / top : 0);
  const largest = buckets[values.indexOf(top)];
  const bars = buckets.map((b, i) => {
    const h = height(values[i]);
    const x = i * slot + slot * 0.2;
    return html`${h > 0 ? html`<rect class="bar" x="${x.toFixed(1)}" y="${(base - h).toFixed(1)}" width="${Math.max(1, slot * 0.6).toFixed(1)}" height="${h.toFixed(1)}"></rect>` : ''}<text class="axis" x="${(i * slot + slot / 2).toFixed(1)}" y="${H - 2}" text-anchor="middle">${b.label}</text>`;
  });
  return html`<figure class="chart"><figcaption>${title}</figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${words.summary}" preserveAspectRatio="none"><title>${words.summary}</title>
<line class="axisline" x1="0" x2="${W}" y1="${base}" y2="${base}"></line>
<text class="axis" x="2" y="10">${top > 0 && largest ? format(largest.value) : ''}</text>${bars}</svg>
<table class="visually-hidden"><caption>${title}</caption><thead><tr><th scope="col">${words.bucket}</th><th scope="col">${words.amount}</th></tr></thead><tbody>${buckets.map(
    (b) => html`<tr><td>${b.label}</td><td>${format(b.value)}</td></tr>`,
  )}</tbody></table></figure>`;
}
