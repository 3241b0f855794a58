import { formatMagnet } from '../downloads/magnet';
import { Download, DOWNLOAD_STATES, DownloadState, holdOf, isActive } from '../downloads/model';
import type { Review } from '../downloads/service';
import { lifecycleNotice } from './download-lifecycle';
import { transferCompact, transferFacts } from './download-transfer';
import { Html, html, raw } from './html';
import type { Ui } from './locale';
import { csrfField, idText, notice, Notice, Page, time, Viewer } from './shell';

/**
 * The downloads UI's pages, rendered on the server from the same Download
 * objects the JSON API serialises, in the request's language (`ui`).
 * Framework-free: a page is a function of its data.
 */

export function stateBadge(ui: Ui, state: DownloadState): Html {
  return html`<span class="state state-${state}"><span class="dot" aria-hidden="true"></span>${ui.t.state[state]}</span>`;
}

export function progressBar(ui: Ui, progress: number | undefined, label: string, compact = false): Html {
  if (typeof progress !== 'number' || !Number.isFinite(progress)) {
    return compact
      ? html`<span class="muted" aria-hidden="true">–</span><span class="visually-hidden">${ui.t.notReported}</span>`
      : html`<span class="muted">${ui.t.notReported}</span>`;
  }
  const value = Math.min(1, Math.max(0, progress));
  const percent = new Intl.NumberFormat(ui.f.locale, { style: 'percent', maximumFractionDigits: 1 }).format(
    Math.floor(value * 1000) / 1000,
  );
  return html`<span class="progress"><progress max="1" value="${value}" aria-label="${label}">${percent}</progress><span>${percent}</span></span>`;
}

function kinds(d: Download): string {
  return d.infohashes.map((h) => h.kind).join(' + ');
}

export interface ListView {
  items: Download[];
  q?: string;
  state?: DownloadState;
  cursor?: string;
  /** Set when this page is not the first. */
  paged: boolean;
  notice?: Notice;
  /** The add form (add-page.ts), for a viewer who may write: rendered by the caller, so the console's pages that
   * share this module bundle no form reader. */
  addForm?: Html;
}

export function listPage(ui: Ui, view: ListView): Page {
  const t = ui.t;
  const query = (cursor?: string) => {
    const params = new URLSearchParams();
    if (view.q) params.set('q', view.q);
    if (view.state) params.set('state', view.state);
    if (cursor) params.set('cursor', cursor);
    const s = params.toString();
    return s ? `/?${s}` : '/';
  };
  const filtered = Boolean(view.q || view.state);
  return {
    title: t.downloads,
    body: html`<h1>${t.downloads}</h1>
<form class="search" method="get" action="/" role="search">
  <div class="field grow"><label for="q">${t.searchLabel}</label>
    <input id="q" name="q" type="search" maxlength="128" value="${view.q ?? ''}" placeholder="${t.searchPlaceholder}" autocomplete="off"></div>
  <div class="field"><label for="state">${t.stateLabel}</label>
    <select id="state" name="state"><option value="">${t.allStates}</option>${DOWNLOAD_STATES.map(
      (s) => html`<option value="${s}"${view.state === s ? raw(' selected') : ''}>${t.state[s]}</option>`,
    )}</select></div>
  <div class="field"><button type="submit">${t.search}</button></div>
</form>
${notice(ui, view.notice)}
${view.addForm ?? ''}
${
  view.items.length === 0
    ? html`<p class="empty">${filtered ? t.noMatch : t.noDownloads}</p>`
    : html`<div class="table-wrap"><table class="list">
<caption class="visually-hidden">${t.listCaption}</caption>
<thead><tr><th scope="col">${t.col.name}</th><th scope="col">${t.col.state}</th><th scope="col">${t.col.progress}</th><th scope="col">${t.col.infohashes}</th><th scope="col">${t.col.created}</th></tr></thead>
<tbody>${view.items.map(
        (
          d,
        ) => html`<tr><td class="name" data-label="${t.col.name}"><a href="/download/${d.id}">${d.name}</a></td><td data-label="${t.col.state}">${stateBadge(ui, d.state)}${holdOf(d) ? html` <span class="hold" data-hold>${t.heldForDiskShort}</span>` : ''}</td>
<td data-label="${t.col.progress}">${progressBar(ui, d.progress, t.progressOf({ name: d.name }), true)}${transferCompact(ui, d)}</td><td data-label="${t.col.infohashes}">${kinds(d)}</td><td data-label="${t.col.created}">${time(ui, d.created_at)}</td></tr>`,
      )}</tbody></table></div>`
}
<nav class="pager" aria-label="${t.pages}">${view.paged ? html`<a href="${query()}">${t.firstPage}</a>` : ''}${
      view.cursor ? html`<a href="${query(view.cursor)}" rel="next">${t.nextPage}</a>` : ''
    }</nav>`,
  };
}

export function cardPage(
  ui: Ui,
  d: Download,
  viewer: Viewer,
  opts: {
    notice?: Notice;
    needsReview: boolean;
    lifecycle?: { now?: number; graceS?: number };
    /** A second add of an active torrent led here (POST /download's answer, as the API's 200). */
    alreadyActive?: boolean;
  },
): Page {
  const t = ui.t;
  const magnet = formatMagnet(d.infohashes, d.name);
  return {
    title: d.name,
    body: html`<p class="crumbs"><a href="/">${t.allDownloads}</a></p>
<h1 class="title">${d.name}</h1>
${opts.alreadyActive ? html`<p class="info" role="status" data-already-active>${t.alreadyActive}</p>` : ''}
${notice(ui, opts.notice)}
${opts.needsReview || d.review_reason ? html`<p class="review-link"><a href="/review/${d.id}">${t.needsDecision}</a></p>` : ''}
${lifecycleNotice(ui, d, viewer, opts.lifecycle)}
<section class="card" aria-labelledby="facts"><h2 id="facts">${t.details}</h2><dl class="facts">
<dt>${t.col.state}</dt><dd>${stateBadge(ui, d.state)}</dd>
<dt>${t.col.progress}</dt><dd>${progressBar(ui, d.progress, t.downloadProgress)}</dd>
${transferFacts(ui, d)}
<dt>${t.col.created}</dt><dd>${time(ui, d.created_at)}</dd>
<dt>${t.updated}</dt><dd>${time(ui, d.updated_at)}</dd>
<dt>${t.id}</dt><dd><code>${idText(d.id)}</code></dd>
<dt>${t.category}</dt><dd data-category>${d.category ? html`<code>${d.category}</code>` : t.categoryDefault}</dd>
${d.merged_into ? html`<dt>${t.mergedInto}</dt><dd><a href="/download/${d.merged_into}">${idText(d.merged_into)}</a></dd>` : ''}
</dl></section>
<section class="card" aria-labelledby="hashes"><h2 id="hashes">${t.col.infohashes}</h2>
<ul class="hashes">${d.infohashes.map(
      (
        h,
      ) => html`<li><span class="kind kind-${h.kind}">${h.kind}</span><code class="hash" data-hash>${idText(h.infohash)}</code>
<button type="button" class="copy" data-copy="${h.infohash}" aria-label="${t.copyInfohash({ kind: h.kind })}">${t.copy}</button></li>`,
    )}</ul>
<div class="field"><label for="magnet">${t.magnet}</label><div class="row"><input id="magnet" class="mono" type="text" readonly value="${magnet}">
<button type="button" class="copy" data-copy="${magnet}" aria-label="${t.copyMagnet}">${t.copy}</button></div></div></section>
${
  viewer.canWrite
    ? html`<section class="card" aria-labelledby="actions"><h2 id="actions">${t.actions}</h2>
<div class="actions">
<form method="post" action="/download/${d.id}/retry">${csrfField(viewer)}<button type="submit">${t.retry}</button></form>
<form method="post" action="/download/${d.id}/cancel">${csrfField(viewer)}<button type="submit" class="secondary"${isActive(d.state) ? '' : raw(' disabled')}>${t.cancel}</button></form>
</div>
<form method="post" action="/download/${d.id}/infohashes" class="add">${csrfField(viewer)}
<div class="field"><label for="infohashes">${t.addInfohashesLabel}</label>
<textarea id="infohashes" name="infohashes" rows="3" maxlength="2400" class="mono" required></textarea></div>
<button type="submit">${t.addInfohashes}</button></form></section>`
    : ''
}`,
  };
}

export function reviewPage(ui: Ui, review: Review, viewer: Viewer, opts: { notice?: Notice }): Page {
  const t = ui.t;
  const d = review.download;
  const shared = (c: Download) =>
    c.infohashes.filter((h) => d.infohashes.some((x) => x.infohash === h.infohash)).map((h) => h.kind);
  return {
    title: t.reviewTitle({ name: d.name }),
    body: html`<p class="crumbs"><a href="/">${t.allDownloads}</a> / <a href="/download/${d.id}">${d.name}</a></p>
<h1 class="title">${t.reviewTitle({ name: d.name })}</h1>
${notice(ui, opts.notice)}
<section class="card" aria-labelledby="why"><h2 id="why">${t.why}</h2>
${
  review.reasons.length === 0
    ? html`<p>${t.nothingWrong}</p>`
    : html`<ul>${review.reasons.map((r) => html`<li>${t.reason[r as keyof typeof t.reason] ?? r}</li>`)}</ul>`
}
<p>${t.col.state}: ${stateBadge(ui, d.state)}</p></section>
<section class="card" aria-labelledby="cands"><h2 id="cands">${t.candidates}</h2>
<form method="post" action="/review/${d.id}">${csrfField(viewer)}
<fieldset><legend>${t.makeActiveLegend}</legend>
<ul class="candidates">${review.candidates.map(
      (
        c,
      ) => html`<li><input type="radio" name="candidate_id" id="c-${c.id}" value="${c.id}"${c.id === d.id ? raw(' checked') : ''}${viewer.canWrite ? '' : raw(' disabled')}>
<label for="c-${c.id}"><span class="cname">${c.name}</span>${c.id === d.id ? html` <em>${t.thisDownload}</em>` : ''}
<span class="meta">${t.candidateMeta({ badge: stateBadge(ui, c.state), kinds: shared(c).join(' + '), created: time(ui, c.created_at), id: c.id })}</span></label>
<a class="open" href="/download/${c.id}" aria-label="${t.openName({ name: c.name })}">${t.open}</a></li>`,
    )}</ul></fieldset>
${viewer.canWrite ? html`<button type="submit">${t.makeActive}</button>` : html`<p class="muted">${t.cannotChange}</p>`}
</form></section>`,
  };
}

export function signInPage(ui: Ui, opts: { next?: string; notice?: Notice }): Page {
  const t = ui.t;
  return {
    title: t.signIn,
    body: html`<h1>${t.signIn}</h1>
${notice(ui, opts.notice)}
<form method="post" action="/signin" class="card signin">
${opts.next ? html`<input type="hidden" name="next" value="${opts.next}">` : ''}
<div class="field"><label for="token">${t.apiToken}</label>
<input id="token" name="token" type="password" autocomplete="current-password" required maxlength="512" spellcheck="false"></div>
<p class="muted">${t.signInHint}</p>
<button type="submit">${t.signIn}</button></form>`,
  };
}
