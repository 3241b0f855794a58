import type { JobSummary, ScanJob } from '../scan/model';
import type { Failure } from '../telegram/store';
import type { Download } from '../downloads/model';
import { TBANK_LIMITS } from '../sync/rate-budget';
import { HOUR_MS, HourlyHead, MANDATORY_SECTIONS, RateUse, StepRow } from '../sync/model';
import { Bucket, duration, quantileChart } from './charts';
import { failureMetricsPanel, MetricsView, scanMetricsPanel, syncMetricsPanel } from './console-metrics';
import { Html, html, raw } from './html';
import { csrfField, Page, stateBadge, time, Viewer } from './pages';

/**
 * The operator console's pages (scan jobs, sync attempts, failures): pure
 * functions of data the console function read. They show what the JSON API
 * and the logs say, as an operator would rather look at it.
 */

/** Rows on one page of a table: with the chart and the shell, 1,000 rows' worth stays far below 200 KB a page. */
export const CONSOLE_PAGE_ROWS = 100;
/** Budget windows shown, newest first: the last few minutes say how close a token runs to its limits. */
const BUDGET_ROWS = 24;

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());
const at = (ms: number | undefined) => (ms === undefined ? html`<span class="muted">–</span>` : time(iso(ms)!));
const span = (from: number | undefined, to: number | undefined) =>
  from === undefined || to === undefined
    ? html`<span class="muted">–</span>`
    : html`${duration(Math.max(0, to - from))}`;

function pill(kind: string, text: string, extra = ''): Html {
  return html`<span class="state st-${kind}${extra}"><span class="dot" aria-hidden="true"></span>${text}</span>`;
}

function pager(base: string, params: Record<string, string | undefined>, page: number, pages: number): Html {
  if (pages <= 1) return html``;
  const href = (n: number) => {
    const q = new URLSearchParams(Object.entries(params).filter((e): e is [string, string] => !!e[1]));
    if (n > 1) q.set('page', String(n));
    const s = q.toString();
    return s ? `${base}?${s}` : base;
  };
  return html`<nav class="pager" aria-label="Pages">${page > 1 ? html`<a href="${href(page - 1)}" rel="prev">Previous page</a>` : ''}<span class="muted">Page ${page} of ${pages}</span>${
    page < pages ? html`<a href="${href(page + 1)}" rel="next">Next page</a>` : ''
  }</nav>`;
}

// --- scan ------------------------------------------------------------------------

/** Where a job is, as an operator names it. */
export const JOB_PHASES = [
  'queued',
  'starting',
  'in-input',
  'settling',
  'publishing',
  'done',
  'needs_check',
  'error',
] as const;
export type JobPhase = (typeof JOB_PHASES)[number];
const PHASE_TEXT: Record<JobPhase, string> = {
  queued: 'Waiting for a slot',
  starting: 'Copying to Input',
  'in-input': 'In Input',
  settling: 'Answer settling',
  publishing: 'Publishing',
  done: 'Done',
  needs_check: 'Needs check',
  error: 'Error',
};

export function jobPhase(j: Pick<JobSummary, 'state' | 'answered_at' | 'published' | 'status'>): JobPhase {
  switch (j.state) {
    case 'queued':
      return 'queued';
    case 'starting':
      return 'starting';
    case 'submitted':
      return j.answered_at === undefined ? 'in-input' : 'settling';
    default:
      if (!j.published) return 'publishing';
      return j.status === 'done' || j.status === 'needs_check' ? j.status : 'error';
  }
}

function phaseBadge(j: JobSummary): Html {
  const phase = jobPhase(j);
  return pill(phase, PHASE_TEXT[phase]);
}

/** The phases' durations: requested → in Input → answered → settled → published. */
const PHASES: ReadonlyArray<[string, (j: JobSummary) => number | undefined]> = [
  ['Requested → in Input', (j) => diff(j.created_at, j.submitted_at)],
  ['In Input → answered', (j) => diff(j.submitted_at, j.answered_at)],
  ['Answered → settled', (j) => diff(j.answered_at, j.finished_at)],
  ['Settled → published', (j) => diff(j.finished_at, j.published_at)],
];
const diff = (a: number | undefined, b: number | undefined) =>
  a === undefined || b === undefined ? undefined : Math.max(0, b - a);

/** One bucket per hour of the window, oldest first, labelled by UTC hour. */
export function hourlyBuckets(
  jobs: readonly JobSummary[],
  now: number,
  hours: number,
  of: (j: JobSummary) => number | undefined,
) {
  const end = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
  const buckets: Bucket[] = Array.from({ length: hours }, (_, i) => ({
    label: `${new Date(end - (hours - i) * HOUR_MS).getUTCHours()}h`,
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

export function scanListPage(v: ScanListView): Page {
  const counts = new Map<JobPhase, number>();
  for (const j of v.jobs) counts.set(jobPhase(j), (counts.get(jobPhase(j)) ?? 0) + 1);
  const shown = v.jobs.filter(
    (j) => (!v.phase || jobPhase(j) === v.phase) && (!v.prefix || j.job_id.startsWith(v.prefix)),
  );
  const pages = Math.max(1, Math.ceil(shown.length / CONSOLE_PAGE_ROWS));
  const page = Math.min(v.page, pages);
  const rows = shown.slice((page - 1) * CONSOLE_PAGE_ROWS, page * CONSOLE_PAGE_ROWS);
  return {
    title: 'Scan jobs',
    body: html`<h1>Scan jobs</h1>
<p class="muted">The last ${v.hours} hours: ${v.jobs.length}${v.truncated ? '+' : ''} ${v.jobs.length === 1 ? 'job' : 'jobs'}, newest first.${
      v.slots ? html` Slots in use: <strong>${v.slots.inUse}</strong> of ${v.slots.max}.` : ''
    }</p>
${v.metrics ? scanMetricsPanel(v.metrics) : ''}
<ul class="counts" aria-label="Jobs by phase">${JOB_PHASES.map(
      (p) => html`<li>${pill(p, PHASE_TEXT[p])} <strong>${counts.get(p) ?? 0}</strong></li>`,
    )}</ul>
<section class="card" aria-labelledby="times"><h2 id="times">Phase times per hour, UTC (median bar, p90 tick)</h2><div class="charts">${PHASES.map(
      ([title, of]) => quantileChart(title, hourlyBuckets(v.jobs, v.now, v.hours, of)),
    )}</div></section>
<form class="search" method="get" action="/scan" role="search">
  <div class="field grow"><label for="prefix">Job id prefix</label>
    <input id="prefix" name="prefix" type="search" maxlength="36" value="${v.prefix ?? ''}" placeholder="e.g. 3f2a" autocomplete="off" spellcheck="false"></div>
  <div class="field"><label for="phase">Phase</label>
    <select id="phase" name="phase"><option value="">All phases</option>${JOB_PHASES.map(
      (p) => html`<option value="${p}"${v.phase === p ? raw(' selected') : ''}>${PHASE_TEXT[p]}</option>`,
    )}</select></div>
  <div class="field"><button type="submit">Filter</button></div>
</form>
${
  rows.length === 0
    ? html`<p class="empty">${v.jobs.length ? 'No job matches.' : 'No scan jobs in this period.'}</p>`
    : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table class="list">
<caption class="visually-hidden">Scan jobs, newest first</caption>
<thead><tr><th scope="col">Job</th><th scope="col">Phase</th><th scope="col">Error</th><th scope="col" class="wide">Attempt</th><th scope="col" class="wide">Requested</th><th scope="col">Total</th></tr></thead>
<tbody>${rows.map(
        (j) =>
          html`<tr><td><a class="mono" href="/scan/${j.job_id}">${j.job_id.slice(0, 8)}</a></td><td>${phaseBadge(j)}</td><td>${j.error_code ? html`<code>${j.error_code}</code>` : ''}</td><td class="wide">${j.attempt}</td><td class="wide">${at(j.created_at)}</td><td>${span(j.created_at, j.published_at ?? j.finished_at)}</td></tr>`,
      )}</tbody></table></div>`
}
${pager('/scan', { phase: v.phase, prefix: v.prefix }, page, pages)}`,
  };
}

export function scanJobPage(job: ScanJob, summary: JobSummary): Page {
  const r = job.result;
  return {
    title: `Scan job ${job.job_id}`,
    body: html`<p class="crumbs"><a href="/scan">All scan jobs</a></p>
<h1 class="title">Scan job <code>${job.job_id}</code></h1>
<section class="card" aria-labelledby="facts"><h2 id="facts">Details</h2><dl class="facts">
<dt>Phase</dt><dd>${phaseBadge(summary)}</dd>
<dt>File</dt><dd><code>${job.request.file_id}</code> · ${job.request.original_name}</dd>
<dt>Attempt</dt><dd>${job.request.attempt}</dd>
<dt>Input object</dt><dd><code>${job.request.s3.bucket}/${job.request.s3.key}</code></dd>
${job.inbox_name ? html`<dt>Name in Input</dt><dd><code>${job.inbox_name}</code></dd>` : ''}
${job.deadline !== undefined ? html`<dt>Deadline</dt><dd>${at(job.deadline)}</dd>` : ''}
</dl></section>
<section class="card" aria-labelledby="phases"><h2 id="phases">Phases</h2>
<ol class="timeline">
<li><span>Requested</span>${at(job.created_at)}</li>
<li><span>In Input</span>${at(job.submitted_at)} ${span(job.created_at, job.submitted_at)}</li>
<li><span>Answered</span>${at(summary.answered_at)} ${span(job.submitted_at, summary.answered_at)}</li>
<li><span>Settled</span>${at(job.finished_at)} ${span(summary.answered_at ?? job.submitted_at, job.finished_at)}</li>
<li><span>Published</span>${at(job.published_at)} ${span(job.finished_at, job.published_at)}</li>
</ol></section>
<section class="card" aria-labelledby="env"><h2 id="env">Envelope</h2>${
      r
        ? html`<dl class="facts"><dt>Status</dt><dd><code>${r.status}</code></dd>
<dt>Error</dt><dd>${r.error ? html`<code>${r.error.code}</code> ${r.error.message}` : 'none'}</dd>
<dt>Documents</dt><dd>${r.documents?.length ?? 0}</dd>
<dt>Warnings</dt><dd>${r.metrics.warnings.length ? r.metrics.warnings.join('; ') : 'none'}</dd>
<dt>Raw answer</dt><dd>${r.raw_s3_key ? html`<a href="/scan/${job.job_id}/raw">Download the raw answer (JSON)</a>` : 'none stored'}</dd></dl>`
        : html`<p class="muted">Not finished yet.</p>`
    }</section>`,
  };
}

// --- sync ------------------------------------------------------------------------

const OUTCOME_TEXT: Record<string, string> = {
  running: 'Running',
  succeeded: 'Succeeded',
  partial: 'Partial',
  failed: 'Failed',
};
function outcome(state: string | undefined, code?: string): Html {
  if (!state) return html`<span class="muted">never ran</span>`;
  return pill(state, OUTCOME_TEXT[state] ?? state, code === 'DEADLINE' || code === 'INTERRUPTED' ? ' marked' : '');
}

export interface SyncListView {
  users: Array<{ user_id: string; created_at: string; head?: HourlyHead }>;
  next?: string;
  paged: boolean;
  metrics?: MetricsView;
}

export function syncListPage(v: SyncListView): Page {
  return {
    title: 'Hourly sync',
    body: html`<h1>Hourly sync</h1>
<p class="muted">Connected users by id, with their latest attempt. Tokens are never shown.</p>
${v.metrics ? syncMetricsPanel(v.metrics) : ''}
${
  v.users.length === 0
    ? html`<p class="empty">No connections yet.</p>`
    : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table class="list">
<caption class="visually-hidden">Connected users</caption>
<thead><tr><th scope="col">User</th><th scope="col">Latest attempt</th><th scope="col">Code</th><th scope="col" class="wide">Started</th></tr></thead>
<tbody>${v.users.map(
        (u) =>
          html`<tr><td><a class="mono" href="/sync/${u.user_id}">${u.user_id}</a></td><td>${outcome(u.head?.state, u.head?.error_code)}</td><td>${u.head?.error_code ? html`<code>${u.head.error_code}</code>` : ''}</td><td class="wide">${at(u.head?.started_at)}</td></tr>`,
      )}</tbody></table></div>`
}
<nav class="pager" aria-label="Pages">${v.paged ? html`<a href="/sync">First page</a>` : ''}${
      v.next ? html`<a href="/sync?after=${v.next}" rel="next">Next page</a>` : ''
    }</nav>`,
  };
}

export interface SyncUserView {
  user: string;
  attempts: HourlyHead[];
  selected?: HourlyHead & { rows: StepRow[] };
  rates: RateUse[];
  now: number;
}

/** The last 48 hours, one cell per hour, the hour's attempt coloured by outcome; DEADLINE and INTERRUPTED marked. */
function strip(user: string, attempts: HourlyHead[], now: number, selected?: string): Html {
  const end = Math.floor(now / HOUR_MS) * HOUR_MS + HOUR_MS;
  const cells = Array.from({ length: 48 }, (_, i) => {
    const from = end - (48 - i) * HOUR_MS;
    const a = attempts.find((x) => x.started_at >= from && x.started_at < from + HOUR_MS);
    const hour = `${new Date(from).toISOString().slice(5, 13).replace('T', ' ')}h UTC`;
    if (!a)
      return html`<li class="cell none" title="${hour}: no attempt"><span class="visually-hidden">${hour}: no attempt</span></li>`;
    const mark = a.error_code === 'DEADLINE' ? 'D' : a.error_code === 'INTERRUPTED' ? 'I' : '';
    const label = `${hour}: ${OUTCOME_TEXT[a.state] ?? a.state}${a.error_code ? ` (${a.error_code})` : ''}`;
    return html`<li class="cell st-${a.state}${a.attempt_id === selected ? ' sel' : ''}"><a href="/sync/${user}?attempt=${a.attempt_id}" title="${label}" aria-label="${label}">${mark}</a></li>`;
  });
  return html`<ol class="strip" aria-label="The last 48 hours, oldest first">${cells}</ol>
<p class="legend muted">${pill('succeeded', 'Succeeded')} ${pill('partial', 'Partial')} ${pill('failed', 'Failed')} ${pill('running', 'Running')} D: DEADLINE · I: INTERRUPTED</p>`;
}

export function syncUserPage(v: SyncUserView): Page {
  const s = v.selected;
  const limits = TBANK_LIMITS as Record<string, number>;
  return {
    title: `Sync of ${v.user}`,
    body: html`<p class="crumbs"><a href="/sync">All users</a></p>
<h1 class="title">Sync of <code>${v.user}</code></h1>
<section class="card" aria-labelledby="hours"><h2 id="hours">Hourly attempts</h2>${strip(v.user, v.attempts, v.now, s?.attempt_id)}</section>
${
  s
    ? html`<section class="card" aria-labelledby="attempt"><h2 id="attempt">Attempt <code>${s.attempt_id}</code></h2>
<p>${outcome(s.state, s.error_code)} ${s.error_code ? html`<code>${s.error_code}</code>` : ''} · started ${at(s.started_at)}${s.finished_at ? html` · finished ${at(s.finished_at)}` : ''}</p>
<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table class="list"><caption class="visually-hidden">Sections of the attempt</caption>
<thead><tr><th scope="col">Section</th><th scope="col">Result</th><th scope="col">Code</th><th scope="col" class="wide">Step</th><th scope="col">T-Bank tracking id</th></tr></thead>
<tbody>${MANDATORY_SECTIONS.map((section) => {
        const result = s.sections?.[section];
        const row = s.rows.find((r) => r.section === section && r.step_id === s.children[section]);
        const state = result?.state ?? row?.state ?? (s.children[section] ? 'running' : 'not-sent');
        return html`<tr><td><code>${section}</code></td><td>${pill(state, state)}</td><td>${(result?.error_code ?? row?.error_code) ? html`<code>${result?.error_code ?? row?.error_code}</code>` : ''}</td><td class="wide">${row ? html`${at(row.started_at)} ${span(row.started_at, row.finished_at)}` : html`<span class="muted">no row</span>`}</td><td>${row?.tracking_id ? html`<code>${row.tracking_id}</code>` : ''}</td></tr>`;
      })}</tbody></table></div></section>`
    : html`<p class="empty">No attempt yet.</p>`
}
<section class="card" aria-labelledby="budget"><h2 id="budget">T-Bank call budget</h2>${
      v.rates.length === 0
        ? html`<p class="muted">No calls in the windows still kept.</p>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table class="list"><caption class="visually-hidden">Calls per service and window</caption>
<thead><tr><th scope="col">Window</th><th scope="col">Service</th><th scope="col">Calls</th></tr></thead>
<tbody>${v.rates.slice(0, BUDGET_ROWS).map((r) => {
            const limit = limits[r.service];
            return html`<tr><td>${at(r.window_start)}</td><td>${r.service}</td><td>${
              limit
                ? html`<span class="progress"><progress max="${limit}" value="${Math.min(r.calls, limit)}" aria-label="${r.service} calls of ${limit}"></progress><span>${r.calls} / ${limit}</span></span>`
                : r.calls
            }</td></tr>`;
          })}</tbody></table></div>`
    }</section>`,
  };
}

// --- failures --------------------------------------------------------------------

export interface FailuresView {
  failures: Failure[];
  review: Download[];
  viewer: Viewer;
  retried?: string;
  metrics?: MetricsView;
}

/** Retried once at most: then its outcome, never the button again. */
function retryCell(f: Failure, viewer: Viewer): Html {
  if (f.retried_at)
    return f.retry_message_id !== undefined
      ? html`<span class="muted">Retried ${time(f.retried_at)}</span>`
      : html`<span class="muted">Retry claimed ${time(f.retried_at)}; outcome unknown</span>`;
  if (!viewer.canWrite || !f.download_id) return html``;
  return html`<form method="post" action="/failures/${f.id}/retry">${csrfField(viewer)}<button type="submit" class="secondary" aria-label="Retry the ${f.kind} message to chat ${f.chat_id}">Retry</button></form>`;
}

export function failuresPage(v: FailuresView): Page {
  return {
    title: 'Failures',
    body: html`<h1>Failures</h1>
${v.retried ? html`<div class="ok" role="status"><p>Delivery sent again: ${v.retried}.</p></div>` : ''}
${v.metrics ? failureMetricsPanel(v.metrics) : ''}
<section class="card" aria-labelledby="tg"><h2 id="tg">Telegram deliveries given up on</h2>${
      v.failures.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<div class="table-wrap" tabindex="0" role="region" aria-label="Table, scrolls sideways"><table class="list"><caption class="visually-hidden">Failed Telegram deliveries, newest first</caption>
<thead><tr><th scope="col">What</th><th scope="col">Reason</th><th scope="col">Action</th></tr></thead>
<tbody>${v.failures.map(
            (f) =>
              html`<tr><td><code>${f.kind}</code> to chat <code>${f.chat_id}</code>${f.download_id ? html` · <a href="/download/${f.download_id}">download</a>` : ''}<br><span class="muted">${time(f.failed_at)}</span></td><td class="reason">${f.reason}</td><td>${retryCell(f, v.viewer)}</td></tr>`,
          )}</tbody></table></div>`
    }</section>
<section class="card" aria-labelledby="rv"><h2 id="rv">Downloads that need a decision</h2>${
      v.review.length === 0
        ? html`<p class="muted">None.</p>`
        : html`<ul class="plain">${v.review.map(
            (d) =>
              html`<li>${stateBadge(d.state)} <a href="/review/${d.id}">${d.name}</a> <span class="muted">updated ${time(d.updated_at)}</span></li>`,
          )}</ul>`
    }</section>`,
  };
}
