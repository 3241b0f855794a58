import { Html, html } from './html';

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

/** A duration as people read it: 850 ms, 12.4 s, 3.2 min, 1.5 h. */
export function duration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  if (ms < 3600_000) return `${(ms / 60_000).toFixed(1)} min`;
  return `${(ms / 3600_000).toFixed(1)} h`;
}

const W = 288;
const H = 96;
const PAD_TOP = 14;
const PAD_BOTTOM = 14;

/**
 * Median (bar) and p90 (tick) per bucket, one small chart: buckets without
 * values draw nothing. The y scale is the largest p90, labelled at the top.
 */
export function quantileChart(title: string, buckets: readonly Bucket[]): Html {
  const stats = buckets.map((b) => {
    const sorted = [...b.values].sort((x, y) => x - y);
    return { label: b.label, n: sorted.length, median: quantile(sorted, 0.5), p90: quantile(sorted, 0.9) };
  });
  const top = Math.max(1, ...stats.map((s) => s.p90 ?? 0));
  const slot = W / Math.max(1, stats.length);
  const y = (v: number) => PAD_TOP + (H - PAD_TOP - PAD_BOTTOM) * (1 - v / top);
  const base = H - PAD_BOTTOM;
  const marks = stats.map((s, i) => {
    if (s.median === undefined || s.p90 === undefined) return '';
    const x = i * slot + slot * 0.15;
    const w = Math.max(1, slot * 0.7);
    return html`<rect class="bar" x="${x.toFixed(1)}" y="${y(s.median).toFixed(1)}" width="${w.toFixed(1)}" height="${(base - y(s.median)).toFixed(1)}"></rect><line class="p90" x1="${x.toFixed(1)}" x2="${(x + w).toFixed(1)}" y1="${y(s.p90).toFixed(1)}" y2="${y(s.p90).toFixed(1)}"></line>`;
  });
  const ticks = stats.map((s, i) =>
    i % 6 === 0
      ? html`<text class="axis" x="${(i * slot + slot / 2).toFixed(1)}" y="${H - 2}" text-anchor="middle">${s.label}</text>`
      : '',
  );
  const seen = stats.filter((s) => s.n > 0);
  const summary = seen.length
    ? `${title}: median and 90th percentile per hour, the highest p90 ${duration(top)}`
    : `${title}: no jobs in this period`;
  return html`<figure class="chart"><figcaption>${title}</figcaption>
<svg viewBox="0 0 ${W} ${H}" width="100%" role="img" aria-label="${summary}" preserveAspectRatio="none"><title>${summary}</title>
<line class="axisline" x1="0" x2="${W}" y1="${base}" y2="${base}"></line>
<text class="axis" x="2" y="10">${duration(top)}</text>${marks}${ticks}</svg>
<table class="visually-hidden"><caption>${title} by hour</caption><thead><tr><th scope="col">hour</th><th scope="col">jobs</th><th scope="col">median</th><th scope="col">p90</th></tr></thead><tbody>${seen.map(
    (s) => html`<tr><td>${s.label}</td><td>${s.n}</td><td>${duration(s.median!)}</td><td>${duration(s.p90!)}</td></tr>`,
  )}</tbody></table></figure>`;
}
