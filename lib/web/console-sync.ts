import { hourStart } from '../i18n';
import { TBANK_LIMITS } from '../sync/rate-budget';
import type { FirstSyncQueue } from '../sync/connections';
import { HOUR_MS, HourlyHead, MANDATORY_SECTIONS, RateUse, StepRow } from '../sync/model';
import { MetricsView, syncMetricsPanel } from './console-metrics';
import { at, cell, pill, span, tableWrap } from './console-parts';
import { Html, html } from './html';
import type { Ui } from './locale';
import { idText, Page } from './shell';

/** The console's sync pages: connected users, and one user's hourly attempts, sections and call budget. */

/** Budget windows shown, newest first: the last few minutes say how close a token runs to its limits. */
const BUDGET_ROWS = 24;

function outcome(ui: Ui, state: string | undefined, code?: string): Html {
  if (!state) return html`<span class="muted">${ui.c.neverRan}</span>`;
  const text = ui.c.outcome[state as keyof Ui['c']['outcome']] ?? state;
  return pill(state, text, code === 'DEADLINE' || code === 'INTERRUPTED' ? ' marked' : '');
}

export interface SyncListView {
  users: Array<{ user_id: string; created_at: string; head?: HourlyHead }>;
  next?: string;
  paged: boolean;
  metrics?: MetricsView;
}

export function syncListPage(ui: Ui, v: SyncListView): Page {
  const c = ui.c;
  const col = c.syncCol;
  return {
    title: c.hourlySync,
    body: html`<h1>${c.hourlySync}</h1>
<p class="muted">${c.syncIntro}</p>
${v.metrics ? syncMetricsPanel(ui, v.metrics) : ''}
${
  v.users.length === 0
    ? html`<p class="empty">${c.noConnections}</p>`
    : tableWrap(
        ui,
        html`<table class="list">
<caption class="visually-hidden">${c.usersCaption}</caption>
<thead><tr><th scope="col">${col.user}</th><th scope="col">${col.latest}</th><th scope="col">${col.code}</th><th scope="col">${col.started}</th></tr></thead>
<tbody>${v.users.map(
          (u) =>
            html`<tr>${cell(col.user, html`<a class="mono" href="/sync/${u.user_id}">${idText(u.user_id)}</a>`)}${cell(col.latest, outcome(ui, u.head?.state, u.head?.error_code))}${cell(
              col.code,
              u.head?.error_code ? html`<code>${idText(u.head.error_code)}</code>` : '',
            )}${cell(col.started, at(ui, u.head?.started_at))}</tr>`,
        )}</tbody></table>`,
      )
}
<nav class="pager" aria-label="${ui.t.pages}">${v.paged ? html`<a href="/sync">${ui.t.firstPage}</a>` : ''}${
      v.next ? html`<a href="/sync?after=${v.next}" rel="next">${ui.t.nextPage}</a>` : ''
    }</nav>`,
  };
}

export interface SyncUserView {
  user: string;
  attempts: HourlyHead[];
  selected?: HourlyHead & { rows: StepRow[] };
  rates: RateUse[];
  now: number;
  /** No attempt yet: where its first sync stands, and the first syncs started a minute (decision 365). */
  queue?: FirstSyncQueue & { perMinute: number };
}

/**
 * The last 48 hours, one cell per hour of the configured zone, the hour's
 * attempt coloured by outcome; DEADLINE and INTERRUPTED marked. Each cell is
 * named by its day and hour in the same zone as the times on the page.
 */
function strip(ui: Ui, user: string, attempts: HourlyHead[], now: number, selected?: string): Html {
  const c = ui.c;
  const end = hourStart(now, ui.f.timeZone) + HOUR_MS;
  const cells = Array.from({ length: 48 }, (_, i) => {
    const from = end - (48 - i) * HOUR_MS;
    const a = attempts.find((x) => x.started_at >= from && x.started_at < from + HOUR_MS);
    const hour = ui.f.dayHour(from);
    if (!a)
      return html`<li class="cell none" title="${c.stripNone({ hour })}" data-hour="${from}"><span class="visually-hidden">${c.stripNone({ hour })}</span></li>`;
    const mark = a.error_code === 'DEADLINE' ? 'D' : a.error_code === 'INTERRUPTED' ? 'I' : '';
    const text = c.outcome[a.state as keyof typeof c.outcome] ?? a.state;
    const label = c.stripCell({ hour, outcome: text, code: a.error_code });
    return html`<li class="cell st-${a.state}${a.attempt_id === selected ? ' sel' : ''}" data-hour="${from}"><a href="/sync/${user}?attempt=${a.attempt_id}" title="${label}" aria-label="${label}">${mark}</a></li>`;
  });
  return html`<ol class="strip" aria-label="${c.stripLabel}">${cells}</ol>
<p class="legend muted">${pill('succeeded', c.outcome.succeeded)} ${pill('partial', c.outcome.partial)} ${pill('failed', c.outcome.failed)} ${pill('running', c.outcome.running)} ${c.stripLegend}</p>`;
}

function sectionsTable(ui: Ui, s: NonNullable<SyncUserView['selected']>): Html {
  const c = ui.c;
  const col = c.stepCol;
  return tableWrap(
    ui,
    html`<table class="list"><caption class="visually-hidden">${c.sectionsCaption}</caption>
<thead><tr><th scope="col">${col.section}</th><th scope="col">${col.result}</th><th scope="col">${col.code}</th><th scope="col">${col.step}</th><th scope="col">${col.tracking}</th></tr></thead>
<tbody>${MANDATORY_SECTIONS.map((section) => {
      const result = s.sections?.[section];
      const row = s.rows.find((r) => r.section === section && r.step_id === s.children[section]);
      const state = result?.state ?? row?.state ?? (s.children[section] ? 'running' : 'not-sent');
      const code = result?.error_code ?? row?.error_code;
      return html`<tr>${cell(col.section, html`<code>${idText(section)}</code>`)}${cell(col.result, pill(state, c.stepState[state as keyof typeof c.stepState] ?? state))}${cell(
        col.code,
        code ? html`<code>${idText(code)}</code>` : '',
      )}${cell(
        col.step,
        row
          ? html`<span class="step">${at(ui, row.started_at)} <span class="muted">· ${span(ui, row.started_at, row.finished_at)}</span></span>`
          : html`<span class="muted">${c.noRow}</span>`,
        'step-cell',
      )}${cell(col.tracking, row?.tracking_id ? html`<code>${idText(row.tracking_id)}</code>` : '')}</tr>`;
    })}</tbody></table>`,
  );
}

export function syncUserPage(ui: Ui, v: SyncUserView): Page {
  const c = ui.c;
  const s = v.selected;
  const limits = TBANK_LIMITS as Record<string, number>;
  const bcol = c.budgetCol;
  return {
    title: c.syncOf({ user: v.user }),
    body: html`<p class="crumbs"><a href="/sync">${c.allUsers}</a></p>
<h1 class="title">${c.syncOfHeading({ user: idText(v.user) })}</h1>
<section class="card" aria-labelledby="hours"><h2 id="hours">${c.hourlyAttempts}</h2>${strip(ui, v.user, v.attempts, v.now, s?.attempt_id)}</section>
${
  s
    ? html`<section class="card" aria-labelledby="attempt"><h2 id="attempt">${c.attemptHeading({ id: idText(s.attempt_id) })}</h2>
<p>${outcome(ui, s.state, s.error_code)} ${s.error_code ? html`<code>${s.error_code}</code>` : ''} · ${c.attemptTimes({
        started: at(ui, s.started_at),
        finished: s.finished_at ? at(ui, s.finished_at) : undefined,
      })}</p>
${sectionsTable(ui, s)}</section>`
    : v.queue
      ? html`<section class="card" aria-labelledby="queued"><h2 id="queued">${c.outcome.queued}</h2>
<p>${pill('queued', c.outcome.queued)} ${c.firstSyncQueued({ position: v.queue.position, at: at(ui, v.queue.expected_at) })}</p>
<p class="muted">${c.firstSyncQueuedWhy({ perMinute: ui.f.number(Math.round(v.queue.perMinute * 10) / 10) })}</p></section>`
      : html`<p class="empty">${c.noAttempt}</p>`
}
<section class="card" aria-labelledby="budget"><h2 id="budget">${c.budget}</h2>${
      v.rates.length === 0
        ? html`<p class="muted">${c.noCalls}</p>`
        : tableWrap(
            ui,
            html`<table class="list"><caption class="visually-hidden">${c.budgetCaption}</caption>
<thead><tr><th scope="col">${bcol.window}</th><th scope="col">${bcol.service}</th><th scope="col">${bcol.calls}</th></tr></thead>
<tbody>${v.rates.slice(0, BUDGET_ROWS).map((r) => {
              const limit = limits[r.service];
              return html`<tr>${cell(bcol.window, at(ui, r.window_start))}${cell(bcol.service, r.service)}${cell(
                bcol.calls,
                limit
                  ? html`<span class="progress"><progress max="${limit}" value="${Math.min(r.calls, limit)}" aria-label="${c.callsOf({ service: r.service, limit })}"></progress><span>${r.calls} / ${limit}</span></span>`
                  : r.calls,
              )}</tr>`;
            })}</tbody></table>`,
          )
    }</section>`,
  };
}
