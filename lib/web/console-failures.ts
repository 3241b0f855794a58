import type { Download } from '../downloads/model';
import type { Failure } from '../telegram/store';
import { failureMetricsPanel, MetricsView } from './console-metrics';
import { cell, tableWrap } from './console-parts';
import { Html, html } from './html';
import type { Ui } from './locale';
import { stateBadge } from './pages';
import { csrfField, Page, time, Viewer } from './shell';

/** The console's failures page: Telegram deliveries given up on (retried once at most), downloads needing a decision. */

export interface FailuresView {
  failures: Failure[];
  review: Download[];
  viewer: Viewer;
  retried?: string;
  metrics?: MetricsView;
}

/** Retried once at most: then its outcome, never the button again. */
function retryCell(ui: Ui, f: Failure, viewer: Viewer): Html {
  const c = ui.c;
  if (f.retried_at)
    return f.retry_message_id !== undefined
      ? html`<span class="muted">${c.retriedAt({ at: time(ui, f.retried_at) })}</span>`
      : html`<span class="muted">${c.retryClaimed({ at: time(ui, f.retried_at) })}</span>`;
  if (!viewer.canWrite || !f.download_id) return html``;
  return html`<form method="post" action="/failures/${f.id}/retry">${csrfField(viewer)}<button type="submit" class="secondary" aria-label="${c.retryLabel({ kind: f.kind, chat: String(f.chat_id) })}">${ui.t.retry}</button></form>`;
}

export function failuresPage(ui: Ui, v: FailuresView): Page {
  const c = ui.c;
  const col = c.failCol;
  return {
    title: c.failures,
    body: html`<h1>${c.failures}</h1>
${v.retried ? html`<div class="ok" role="status"><p>${c.sentAgain({ id: v.retried })}</p></div>` : ''}
${v.metrics ? failureMetricsPanel(ui, v.metrics) : ''}
<section class="card" aria-labelledby="tg"><h2 id="tg">${c.givenUp}</h2>${
      v.failures.length === 0
        ? html`<p class="muted">${c.none}</p>`
        : tableWrap(
            ui,
            html`<table class="list"><caption class="visually-hidden">${c.failuresCaption}</caption>
<thead><tr><th scope="col">${col.what}</th><th scope="col">${col.reason}</th><th scope="col">${col.action}</th></tr></thead>
<tbody>${v.failures.map(
              (f) =>
                html`<tr>${cell(
                  col.what,
                  html`<span>${c.failureWhat({ kind: f.kind, chat: String(f.chat_id), download: f.download_id })}<br><span class="muted">${time(ui, f.failed_at)}</span></span>`,
                )}${cell(col.reason, f.reason, 'reason')}${cell(col.action, retryCell(ui, f, v.viewer))}</tr>`,
            )}</tbody></table>`,
          )
    }</section>
<section class="card" aria-labelledby="rv"><h2 id="rv">${c.needDecision}</h2>${
      v.review.length === 0
        ? html`<p class="muted">${c.none}</p>`
        : html`<ul class="plain">${v.review.map(
            (d) =>
              html`<li>${stateBadge(ui, d.state)} <a href="/review/${d.id}">${d.name}</a> <span class="muted">${c.updatedAt({ at: time(ui, d.updated_at) })}</span></li>`,
          )}</ul>`
    }</section>`,
  };
}
