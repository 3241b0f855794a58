import type { JobSummary, ScanJob } from '../scan/model';
import { hourStart } from '../i18n';
import { HOUR_MS } from '../sync/model';
import { Bucket, quantileChart } from './charts';
import { scanMetricsPanel, MetricsView } from './console-metrics';
import { at, cell, pill, span, tableWrap } from './console-parts';
import { JOB_PHASES, jobPhase, JobPhase } from './console-phases';
import { Html, html, raw } from './html';
import type { Ui } from './locale';
import { idText, Page } from './shell';

/**
 * The operator console's scan pages: pure functions of data the console
 * function read, in the request's language and time zone. They show what the
 * JSON API and the logs say, as an operator would rather look at it. The sync
 * and failures pages: console-sync.ts, console-failures.ts.
 */

export { JOB_PHASES, jobPhase } from './console-phases';
export type { JobPhase } from './console-phases';
export { syncListPage, syncUserPage } from './console-sync';
export type { SyncListView, SyncUserView } from './console-sync';
export { failuresPage } from './console-failures';
export type { FailuresView } from './console-failures';

/** Rows on one page of a table: with the chart and the shell, 1,000 rows' worth stays far below 200 KB a page. */
export const CONSOLE_PAGE_ROWS = 100;

function pager(ui: Ui, base: string, params: Record<string, string | undefined>, page: number, pages: number): Html {
  if (pages <= 1) return html``;
  const href = (n: number) => {
    const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => !!e[1]));
    if (n > 1) q.set('page', String(n));
    const s = q.toString();
    return s ? `${base}?${s}` : base;
  };
  const t = ui.t;
  return html`<nav class="pager" aria-label="${t.pages}">${page > 1 ? html`<a href="${href(page - 1)}" rel="prev">${t.previousPage}</a>` : ''}<span class="muted">${t.pageOf({ page, pages })}</span>${
    page < pages ? html`<a href="${href(page + 1)}" rel="next">${t.nextPage}</a>` : ''
  }</nav>`;
}

function phaseBadge(ui: Ui, j: JobSummary): Html {
  const phase = jobPhase(j);
  return pill(phase, ui.c.phase[phase]);
}

/** The phases' durations: requested → in Input → answered → settled → published. */
const PHASES: ReadonlyArray<
  ['created' | 'submitted' | 'answered' | 'published', (j: JobSummary) => number | undefined]
> = [
  ['created', (j) => diff(j.created_at, j.submitted_at)],
  ['submitted', (j) => diff(j.submitted_at, j.answered_at)],
  ['answered', (j) => diff(j.answered_at, j.finished_at)],
  ['published', (j) => diff(j.finished_at, j.published_at)],
];
const diff = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? undefined : Math.max(0, b - a);

/**
 * One bucket per hour of the window, oldest first: hours of the configured
 * zone, labelled by their start there, so the chart reads in the same hours
 * as the times beside it.
 */
export function hourlyBuckets(
  ui: Ui,
  jobs: readonly JobSummary[],
  now: number,
  hours: number,
  of: (j: JobSummary) => number | undefined,
) {
  const end = hourStart(now, ui.f.timeZone) + HOUR_MS;
  const buckets: Bucket[] = Array.from({ length: hours }, (_, i) => ({
    label: ui.f.hour(end - (hours - i) * HOUR_MS),
    values: [],
  }));
  for (const j of jobs) {
    const i = hours - Math.ceil((end - j.created_at) / HOUR_MS);
    const v = of(j);
    if (i >= 0 && i < hours && v !== undefined) buckets[i].values.push(v);
  }
  return buckets;
}

export interface ScanListView {
  /** Every job of the window (the chart and the counts); the table shows one page of the filtered ones. */
  jobs: JobSummary[];
  now: number;
  hours: number;
  phase?: JobPhase;
  prefix?: string;
  page: number;
  /** The window held more jobs than were read. */
  truncated: boolean;
  /** The gateway's in-flight slots: taken now, and its SCAN_MAX_INFLIGHT. */
  slots?: { inUse: number; max: number };
  /** The scan metrics panel's data, and the gateway's bound on answer → envelope (settle + poll + 1 s). */
  metrics?: MetricsView & { answerBoundMs: number };
}

export function scanListPage(ui: Ui, v: ScanListView): Page {
  const c = ui.c;
  const counts = new Map<JobPhase, number>();
  for (const j of v.jobs) counts.set(jobPhase(j), (counts.get(jobPhase(j)) ?? 0) + 1);
  const shown = v.jobs.filter(
    (j) => (!v.phase || jobPhase(j) === v.phase) && (!v.prefix || j.job_id.startsWith(v.prefix)),
  );
  const pages = Math.max(1, Math.ceil(shown.length / CONSOLE_PAGE_ROWS));
  const page = Math.min(v.page, pages);
  const rows = shown.slice((page - 1) * CONSOLE_PAGE_ROWS, page * CONSOLE_PAGE_ROWS);
  const col = c.scanCol;
  return {
    title: c.scanJobs,
    body: html`<h1>${c.scanJobs}</h1>
<p class="muted">${c.scanIntro({ hours: v.hours, jobs: v.jobs.length, more: v.truncated })}${v.slots ? html` ${c.slots(v.slots)}` : ''}</p>
${v.metrics ? scanMetricsPanel(ui, v.metrics) : ''}
<ul class="counts" aria-label="${c.jobsByPhase}">${JOB_PHASES.map(
      (p) => html`<li>${pill(p, c.phase[p])} <strong>${counts.get(p) ?? 0}</strong></li>`,
    )}</ul>
<section class="card" aria-labelledby="times"><h2 id="times">${c.phaseTimes({ zone: ui.f.zone(v.now) })}</h2><div class="charts">${PHASES.map(
      ([key, of]) => quantileChart(ui, c.phaseSpan[key], hourlyBuckets(ui, v.jobs, v.now, v.hours, of)),
    )}</div></section>
<form class="search" method="get" action="/scan" role="search">
  <div class="field grow"><label for="prefix">${c.prefix}</label>
    <input id="prefix" name="prefix" type="search" maxlength="36" value="${v.prefix ?? ''}" placeholder="${c.prefixPlaceholder}" autocomplete="off" spellcheck="false"></div>
  <div class="field"><label for="phase">${c.phaseLabel}</label>
    <select id="phase" name="phase"><option value="">${c.allPhases}</option>${JOB_PHASES.map(
      (p) => html`<option value="${p}"${v.phase === p ? raw(' selected') : ''}>${c.phase[p]}</option>`,
    )}</select></div>
  <div class="field"><button type="submit">${c.filter}</button></div>
</form>
${
  rows.length === 0
    ? html`<p class="empty">${v.jobs.length ? c.noJobMatches : c.noJobs}</p>`
    : tableWrap(
        ui,
        html`<table class="list">
<caption class="visually-hidden">${c.scanCaption}</caption>
<thead><tr><th scope="col">${col.job}</th><th scope="col">${col.phase}</th><th scope="col">${col.error}</th><th scope="col">${col.attempt}</th><th scope="col">${col.requested}</th><th scope="col">${col.total}</th></tr></thead>
<tbody>${rows.map(
          (j) =>
            html`<tr>${cell(col.job, html`<a class="mono" href="/scan/${j.job_id}">${j.job_id.slice(0, 8)}</a>`)}${cell(col.phase, phaseBadge(ui, j))}${cell(
              col.error,
              j.error_code ? html`<code>${idText(j.error_code)}</code>` : '',
            )}${cell(col.attempt, j.attempt)}${cell(col.requested, at(ui, j.created_at))}${cell(
              col.total,
              span(ui, j.created_at, j.published_at ?? j.finished_at),
            )}</tr>`,
        )}</tbody></table>`,
      )
}
${pager(ui, '/scan', { phase: v.phase, prefix: v.prefix }, page, pages)}`,
  };
}

export function scanJobPage(ui: Ui, job: ScanJob, summary: JobSummary): Page {
  const c = ui.c;
  const r = job.result;
  const tl = c.timeline;
  return {
    title: c.scanJob({ id: job.job_id }),
    body: html`<p class="crumbs"><a href="/scan">${c.allScanJobs}</a></p>
<h1 class="title">${c.scanJobHeading({ id: idText(job.job_id) })}</h1>
<section class="card" aria-labelledby="facts"><h2 id="facts">${c.details}</h2><dl class="facts">
<dt>${c.phaseLabel}</dt><dd>${phaseBadge(ui, summary)}</dd>
<dt>${c.file}</dt><dd><code>${idText(job.request.file_id)}</code> · ${job.request.original_name}</dd>
<dt>${c.scanCol.attempt}</dt><dd>${job.request.attempt}</dd>
<dt>${c.inputObject}</dt><dd><code>${idText(`${job.request.s3.bucket}/${job.request.s3.key}`)}</code></dd>
${job.inbox_name ? html`<dt>${c.inboxName}</dt><dd><code>${idText(job.inbox_name)}</code></dd>` : ''}
${job.deadline !== undefined ? html`<dt>${c.deadline}</dt><dd>${at(ui, job.deadline)}</dd>` : ''}
</dl></section>
<section class="card" aria-labelledby="phases"><h2 id="phases">${c.phases}</h2>
<ol class="timeline">
<li><span>${tl.requested}</span>${at(ui, job.created_at)}</li>
<li><span>${tl.inInput}</span>${at(ui, job.submitted_at)} ${span(ui, job.created_at, job.submitted_at)}</li>
<li><span>${tl.answered}</span>${at(ui, summary.answered_at)} ${span(ui, job.submitted_at, summary.answered_at)}</li>
<li><span>${tl.settled}</span>${at(ui, job.finished_at)} ${span(ui, summary.answered_at ?? job.submitted_at, job.finished_at)}</li>
<li><span>${tl.published}</span>${at(ui, job.published_at)} ${span(ui, job.finished_at, job.published_at)}</li>
</ol></section>
<section class="card" aria-labelledby="env"><h2 id="env">${c.envelope}</h2>${
      r
        ? html`<dl class="facts"><dt>${c.status}</dt><dd><code>${r.status}</code></dd>
<dt>${c.scanCol.error}</dt><dd>${r.error ? html`<code>${idText(r.error.code)}</code> ${r.error.message}` : c.none}</dd>
<dt>${c.documents}</dt><dd>${r.documents?.length ?? 0}</dd>
<dt>${c.warnings}</dt><dd>${r.metrics.warnings.length ? r.metrics.warnings.join('; ') : c.none}</dd>
<dt>${c.rawAnswer}</dt><dd>${r.raw_s3_key ? html`<a href="/scan/${job.job_id}/raw">${c.downloadRaw}</a>` : c.noneStored}</dd></dl>`
        : html`<p class="muted">${c.notFinished}</p>`
    }</section>`,
  };
}
