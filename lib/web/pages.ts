import { formatMagnet } from '../downloads/magnet';
import { Download, DOWNLOAD_STATES, DownloadState, isActive } from '../downloads/model';
import type { Review } from '../downloads/service';
import { Html, html, raw } from './html';

/**
 * The UI's pages, rendered on the server from the same Download objects the
 * JSON API serialises. Framework-free: a page is a function of its data.
 * Inline style and script carry the response's CSP nonce (lib/web/handler).
 */

export interface Viewer {
  principal: string;
  canWrite: boolean;
  /** The session's scopes: the console's links show only what the viewer may open. */
  scopes: readonly string[];
  /** The session's form token, echoed by every state-changing form. */
  csrf: string;
}

/** A refusal shown on a page: the API's error code and message, and the owner to link to on a 409. */
export interface Notice {
  code: string;
  message: string;
  ownerId?: string;
}

export interface Page {
  title: string;
  body: Html;
}

const STATE_TEXT: Record<DownloadState, string> = {
  queued: 'Queued',
  downloading: 'Downloading',
  paused: 'Paused',
  stuck: 'Stuck',
  completed: 'Completed',
  failed: 'Failed',
  cancelled: 'Cancelled',
};

const REASON_TEXT: Record<string, string> = {
  stuck: 'It is stuck: the torrent client did not take it or stopped making progress.',
  failed: 'It failed.',
  missing_in_client: 'Its torrent is no longer in the torrent client.',
  adopted_from_client: 'It was adopted from the torrent client, not added here.',
  shares_infohash: 'Other downloads share one of its infohashes.',
};

/** The document around every page. */
export function layout(page: Page, opts: { nonce: string; viewer?: Viewer }): string {
  const { viewer, nonce } = opts;
  return (
    '<!doctype html>' +
    html`<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · torrent-scan-sync</title><style nonce="${nonce}">${raw(CSS)}</style></head>
<body><a class="skip" href="#main">Skip to content</a>
<header class="top"><a class="brand" href="/">torrent-scan-sync</a>${viewer ? nav(viewer) : ''}${
      viewer
        ? html`<div class="who"><span>Signed in as <strong>${viewer.principal}</strong></span>
<form method="post" action="/signout">${csrfField(viewer)}<button type="submit" class="link">Sign out</button></form></div>`
        : ''
    }</header>
<main id="main">${page.body}</main>
<div id="status" class="visually-hidden" role="status" aria-live="polite"></div>
<script nonce="${nonce}">${raw(SCRIPT)}</script></body></html>`.text
  );
}

/** The sections a viewer may open: a link per scope held (the authorizer refuses the rest with 403). */
const NAV: ReadonlyArray<[string, string, string]> = [
  ['/', 'Downloads', 'downloads:read'],
  ['/scan', 'Scan', 'scan:read'],
  ['/sync', 'Sync', 'sync:read'],
  ['/failures', 'Failures', 'downloads:read'],
];
function nav(viewer: Viewer): Html {
  return html`<nav class="sections" aria-label="Sections">${NAV.filter(([, , scope]) =>
    viewer.scopes.includes(scope),
  ).map(([href, text]) => html`<a href="${href}">${text}</a>`)}</nav>`;
}

export function csrfField(viewer: Viewer): Html {
  return html`<input type="hidden" name="csrf" value="${viewer.csrf}">`;
}

export function stateBadge(state: DownloadState): Html {
  return html`<span class="state state-${state}"><span class="dot" aria-hidden="true"></span>${STATE_TEXT[state]}</span>`;
}

/** Viewer's locale by script; the exact UTC value on hover and without script. */
export function time(iso: string): Html {
  return html`<time datetime="${iso}" title="${iso} (UTC)" data-local>${iso.replace('T', ' ').replace(/\.\d+Z$/, 'Z')}</time>`;
}

export function progressBar(progress: number | undefined, label: string, compact = false): Html {
  if (typeof progress !== 'number' || !Number.isFinite(progress)) {
    return compact
      ? html`<span class="muted" aria-hidden="true">–</span><span class="visually-hidden">not reported yet</span>`
      : html`<span class="muted">not reported yet</span>`;
  }
  const value = Math.min(1, Math.max(0, progress));
  const percent = `${Math.floor(value * 1000) / 10}%`;
  return html`<span class="progress"><progress max="1" value="${value}" aria-label="${label}">${percent}</progress><span>${percent}</span></span>`;
}

function notice(n: Notice | undefined): Html {
  if (!n) return html``;
  return html`<div class="notice" role="alert"><p><strong>Refused (${n.code}).</strong> ${n.message}</p>${
    n.ownerId ? html`<p>The current owner is <a href="/download/${n.ownerId}">download ${n.ownerId}</a>.</p>` : ''
  }</div>`;
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
}

export function listPage(view: ListView): Page {
  const query = (cursor: string) => {
    const params = new URLSearchParams();
    if (view.q) params.set('q', view.q);
    if (view.state) params.set('state', view.state);
    params.set('cursor', cursor);
    return `/?${params.toString()}`;
  };
  const filtered = Boolean(view.q || view.state);
  return {
    title: 'Downloads',
    body: html`<h1>Downloads</h1>
<form class="search" method="get" action="/" role="search">
  <div class="field grow"><label for="q">Name or infohash prefix</label>
    <input id="q" name="q" type="search" maxlength="128" value="${view.q ?? ''}" placeholder="e.g. Sintel or c12fe1" autocomplete="off"></div>
  <div class="field"><label for="state">State</label>
    <select id="state" name="state"><option value="">All states</option>${DOWNLOAD_STATES.map(
      (s) => html`<option value="${s}"${view.state === s ? raw(' selected') : ''}>${STATE_TEXT[s]}</option>`,
    )}</select></div>
  <div class="field"><button type="submit">Search</button></div>
</form>
${notice(view.notice)}
${
  view.items.length === 0
    ? html`<p class="empty">${filtered ? 'No download matches.' : 'No downloads yet.'}</p>`
    : html`<div class="table-wrap"><table class="list">
<caption class="visually-hidden">Downloads, newest first</caption>
<thead><tr><th scope="col">Name</th><th scope="col">State</th><th scope="col">Progress</th><th scope="col" class="wide">Infohashes</th><th scope="col" class="wide">Created</th></tr></thead>
<tbody>${view.items.map(
        (d) => html`<tr><td class="name"><a href="/download/${d.id}">${d.name}</a></td><td>${stateBadge(d.state)}</td>
<td>${progressBar(d.progress, `Progress of ${d.name}`, true)}</td><td class="wide">${kinds(d)}</td><td class="wide">${time(d.created_at)}</td></tr>`,
      )}</tbody></table></div>`
}
<nav class="pager" aria-label="Pages">${view.paged ? html`<a href="${filtered ? `/?${new URLSearchParams({ ...(view.q ? { q: view.q } : {}), ...(view.state ? { state: view.state } : {}) }).toString()}` : '/'}">First page</a>` : ''}${
      view.cursor ? html`<a href="${query(view.cursor)}" rel="next">Next page</a>` : ''
    }</nav>`,
  };
}

export function cardPage(d: Download, viewer: Viewer, opts: { notice?: Notice; needsReview: boolean }): Page {
  const magnet = formatMagnet(d.infohashes, d.name);
  return {
    title: d.name,
    body: html`<p class="crumbs"><a href="/">All downloads</a></p>
<h1 class="title">${d.name}</h1>
${notice(opts.notice)}
${
  opts.needsReview || d.review_reason
    ? html`<p class="review-link"><a href="/review/${d.id}">This download needs a decision: review it</a></p>`
    : ''
}
<section class="card" aria-labelledby="facts"><h2 id="facts">Details</h2><dl class="facts">
<dt>State</dt><dd>${stateBadge(d.state)}</dd>
<dt>Progress</dt><dd>${progressBar(d.progress, 'Download progress')}</dd>
<dt>Created</dt><dd>${time(d.created_at)}</dd>
<dt>Updated</dt><dd>${time(d.updated_at)}</dd>
<dt>Id</dt><dd><code>${d.id}</code></dd>
${d.merged_into ? html`<dt>Merged into</dt><dd><a href="/download/${d.merged_into}">${d.merged_into}</a></dd>` : ''}
</dl></section>
<section class="card" aria-labelledby="hashes"><h2 id="hashes">Infohashes</h2>
<ul class="hashes">${d.infohashes.map(
      (
        h,
      ) => html`<li><span class="kind kind-${h.kind}">${h.kind}</span><code class="hash" data-hash>${h.infohash}</code>
<button type="button" class="copy" data-copy="${h.infohash}" aria-label="Copy ${h.kind} infohash">Copy</button></li>`,
    )}</ul>
<div class="field"><label for="magnet">Magnet link</label><div class="row"><input id="magnet" class="mono" type="text" readonly value="${magnet}">
<button type="button" class="copy" data-copy="${magnet}" aria-label="Copy magnet link">Copy</button></div></div></section>
${
  viewer.canWrite
    ? html`<section class="card" aria-labelledby="actions"><h2 id="actions">Actions</h2>
<div class="actions">
<form method="post" action="/download/${d.id}/retry">${csrfField(viewer)}<button type="submit">Retry</button></form>
<form method="post" action="/download/${d.id}/cancel">${csrfField(viewer)}<button type="submit" class="secondary"${isActive(d.state) ? '' : raw(' disabled')}>Cancel</button></form>
</div>
<form method="post" action="/download/${d.id}/infohashes" class="add">${csrfField(viewer)}
<div class="field"><label for="infohashes">Add infohashes (one per line: 40 hex for v1, 64 hex for v2)</label>
<textarea id="infohashes" name="infohashes" rows="3" maxlength="2400" class="mono" required></textarea></div>
<button type="submit">Add infohashes</button></form></section>`
    : ''
}`,
  };
}

export function reviewPage(review: Review, viewer: Viewer, opts: { notice?: Notice }): Page {
  const d = review.download;
  const shared = (c: Download) =>
    c.infohashes.filter((h) => d.infohashes.some((x) => x.infohash === h.infohash)).map((h) => h.kind);
  return {
    title: `Review ${d.name}`,
    body: html`<p class="crumbs"><a href="/">All downloads</a> / <a href="/download/${d.id}">${d.name}</a></p>
<h1 class="title">Review: ${d.name}</h1>
${notice(opts.notice)}
<section class="card" aria-labelledby="why"><h2 id="why">Why it needs a decision</h2>
${
  review.reasons.length === 0
    ? html`<p>Nothing is wrong with it right now.</p>`
    : html`<ul>${review.reasons.map((r) => html`<li>${REASON_TEXT[r] ?? r}</li>`)}</ul>`
}
<p>State: ${stateBadge(d.state)}</p></section>
<section class="card" aria-labelledby="cands"><h2 id="cands">Candidates sharing its infohashes</h2>
<form method="post" action="/review/${d.id}">${csrfField(viewer)}
<fieldset><legend>Make one candidate the active download</legend>
<ul class="candidates">${review.candidates.map(
      (
        c,
      ) => html`<li><input type="radio" name="candidate_id" id="c-${c.id}" value="${c.id}"${c.id === d.id ? raw(' checked') : ''}${viewer.canWrite ? '' : raw(' disabled')}>
<label for="c-${c.id}"><span class="cname">${c.name}</span>${c.id === d.id ? html` <em>(this download)</em>` : ''}
<span class="meta">${stateBadge(c.state)} shares ${shared(c).join(' + ')} · created ${time(c.created_at)} · <code>${c.id}</code></span></label>
<a class="open" href="/download/${c.id}" aria-label="Open ${c.name}">Open</a></li>`,
    )}</ul></fieldset>
${viewer.canWrite ? html`<button type="submit">Make active</button>` : html`<p class="muted">Your token cannot change downloads.</p>`}
</form></section>`,
  };
}

export function signInPage(opts: { next?: string; notice?: Notice }): Page {
  return {
    title: 'Sign in',
    body: html`<h1>Sign in</h1>
${notice(opts.notice)}
<form method="post" action="/signin" class="card signin">
${opts.next ? html`<input type="hidden" name="next" value="${opts.next}">` : ''}
<div class="field"><label for="token">API token</label>
<input id="token" name="token" type="password" autocomplete="current-password" required maxlength="512" spellcheck="false"></div>
<p class="muted">Any API token with the <code>downloads:read</code> scope (<code>npm run token -- new</code>). It is sent once, never kept: the session lasts 8 hours or until you sign out.</p>
<button type="submit">Sign in</button></form>`,
  };
}

export function messagePage(title: string, text: string): Page {
  return { title, body: html`<h1>${title}</h1><p>${text}</p><p><a href="/">Back to all downloads</a></p>` };
}

const CSS = `
:root{--fg:#1b1f24;--muted:#57606a;--bg:#f6f8fa;--card:#fff;--line:#d0d7de;--accent:#0550ae;--bad:#a40e26;--font:system-ui,-apple-system,"Segoe UI",Roboto,sans-serif}
*{box-sizing:border-box}
body{margin:0;font:16px/1.5 var(--font);color:var(--fg);background:var(--bg)}
a{color:var(--accent)}
:focus-visible{outline:3px solid #1f6feb;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px 8px;z-index:2}
.visually-hidden{position:absolute;width:1px;height:1px;overflow:hidden;clip:rect(0 0 0 0);white-space:nowrap}
.top{display:flex;flex-wrap:wrap;gap:8px;justify-content:space-between;align-items:center;padding:10px 20px;background:#24292f;color:#fff}
.top a.brand{color:#fff;font-weight:600;text-decoration:none}
.who{display:flex;gap:12px;align-items:center;font-size:.9rem}.who form{margin:0}
button.link{background:none;border:1px solid #8c959f;color:#fff;padding:4px 10px}
main{max-width:1000px;margin:0 auto;padding:16px 20px 40px}
h1{font-size:1.6rem;margin:.4em 0}.title{word-break:break-word}
h2{font-size:1.15rem;margin:0 0 .6em}
.card{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:16px;margin:16px 0}
.crumbs{margin:0;font-size:.9rem}
.muted,.empty{color:var(--muted)}
code,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.9rem}
label{display:block;font-weight:600;margin-bottom:4px}
input[type=search],input[type=text],input[type=password],select,textarea{width:100%;padding:8px;border:1px solid #8c959f;border-radius:6px;font:inherit;background:#fff;color:var(--fg)}
textarea.mono,input.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
button{font:inherit;padding:8px 14px;border-radius:6px;border:1px solid #1a7f37;background:#1f883d;color:#fff;cursor:pointer;min-height:40px}
button.secondary{background:#fff;color:var(--fg);border-color:#8c959f}
button.copy{background:#fff;color:var(--accent);border-color:var(--accent);padding:4px 10px;min-height:36px}
button:disabled{opacity:.55;cursor:not-allowed}
.search{display:flex;flex-wrap:wrap;gap:12px;align-items:flex-end;margin:8px 0 16px}
.field{margin:0 0 12px}.search .field{margin:0}.grow{flex:1 1 260px}
.row{display:flex;gap:8px}.row input{flex:1;min-width:0}
.table-wrap{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:8px}
table.list{width:100%;border-collapse:collapse}
.list th,.list td{text-align:left;padding:10px 12px;border-bottom:1px solid var(--line);vertical-align:middle}
.list tbody tr:last-child td{border-bottom:0}
.list td.name{word-break:break-word;max-width:360px}
.state{display:inline-flex;align-items:center;gap:6px;padding:2px 10px;border-radius:999px;font-size:.85rem;font-weight:600;border:1px solid;white-space:nowrap}
.state .dot{width:8px;height:8px;border-radius:50%;background:currentColor}
.state-queued{color:#0550ae;background:#ddf4ff}
.state-downloading{color:#0a5d63;background:#d8f3f1}
.state-paused{color:#4d5661;background:#eaeef2}
.state-stuck{color:#7a4100;background:#fff1c7}
.state-completed{color:#116329;background:#dafbe1}
.state-failed{color:#a40e26;background:#ffebe9}
.state-cancelled{color:#3d444d;background:#eaeef2;border-style:dashed}
.progress{display:inline-flex;align-items:center;gap:8px;white-space:nowrap}
.list time{white-space:nowrap}
progress{width:120px;height:12px;accent-color:#1f883d}
.facts{display:grid;grid-template-columns:max-content 1fr;gap:8px 16px;margin:0}.facts dt{font-weight:600}.facts dd{margin:0;word-break:break-all}
.hashes{list-style:none;padding:0;margin:0 0 16px}
.hashes li{display:flex;flex-wrap:wrap;gap:8px;align-items:center;padding:8px 0;border-bottom:1px solid var(--line)}
.hash{word-break:break-all;flex:1 1 200px}
.kind{font-weight:700;font-size:.8rem;padding:2px 8px;border-radius:4px;background:#eaeef2;color:#1b1f24}
.kind-v2{background:#fbefff;color:#6e2b8c}
.actions{display:flex;gap:12px;flex-wrap:wrap;margin-bottom:16px}.actions form{margin:0}
.notice{border:1px solid var(--bad);background:#ffebe9;color:#5e0a16;border-radius:8px;padding:8px 16px;margin:16px 0}.notice p{margin:.4em 0}.notice a{color:#5e0a16;font-weight:600}
.review-link{background:#fff8c5;border:1px solid #d4a72c;border-radius:8px;padding:8px 16px}
fieldset{border:0;padding:0;margin:0}legend{font-weight:600;margin-bottom:8px}
.candidates{list-style:none;padding:0;margin:0 0 16px}
.candidates li{display:flex;gap:10px;align-items:flex-start;padding:10px 0;border-bottom:1px solid var(--line)}
.candidates input{margin-top:6px;width:18px;height:18px}.candidates label{flex:1;font-weight:400;margin:0}
.cname{font-weight:600;word-break:break-word}.meta{display:block;color:var(--muted);font-size:.9rem;overflow-wrap:anywhere}
.pager{display:flex;gap:16px;margin-top:16px}
.signin{max-width:440px}
.sections{display:flex;gap:14px;flex:1 1 auto;margin-left:16px}.sections a{color:#fff}
.counts{list-style:none;display:flex;flex-wrap:wrap;gap:8px 16px;padding:0;margin:8px 0 16px}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(240px,1fr));gap:16px}
.chart{margin:0;position:relative;overflow:hidden}.chart figcaption{font-weight:600;font-size:.9rem}.chart svg{height:96px;display:block;background:#f6f8fa;border-radius:4px}
.chart .bar{fill:#218bff}.chart .p90{stroke:#a40e26;stroke-width:2}.chart .axis{font-size:9px;fill:#57606a}.chart .axisline{stroke:#8c959f}
.chart .s-succeeded{fill:#2da44e}.chart .s-partial{fill:#d4a72c}.chart .s-failed{fill:#cf222e}
.swatch{display:inline-block;width:10px;height:10px;border-radius:2px;margin-left:8px}.swatch.s-succeeded{background:#2da44e}.swatch.s-partial{background:#d4a72c}.swatch.s-failed{background:#cf222e}
.figures{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:12px;margin:8px 0 16px}.figures div{border:1px solid var(--line);border-radius:6px;padding:8px 12px}.figures dt{font-size:.85rem}.figures dd{margin:2px 0 0;font-size:1.3rem;font-weight:600}.figures dd.muted{font-size:.75rem;font-weight:400;overflow-wrap:anywhere}.figures .over{border-color:var(--bad);background:#fff5f5}.flag{font-size:.8rem;color:#a40e26;font-weight:600}
.st-queued,.st-starting,.st-in-input,.st-running{color:#0550ae;background:#ddf4ff}
.st-settling,.st-publishing{color:#0a5d63;background:#d8f3f1}
.st-done,.st-succeeded{color:#116329;background:#dafbe1}
.st-needs_check,.st-partial{color:#7a4100;background:#fff1c7}
.st-error,.st-failed,.st-missing,.st-expired{color:#a40e26;background:#ffebe9}
.st-not-sent,.marked{border-style:dashed}
.strip{list-style:none;display:grid;grid-template-columns:repeat(24,1fr);gap:3px;padding:0;margin:0 0 8px}
.cell{height:28px;border-radius:3px;border:1px solid var(--line);font-size:.8rem;text-align:center;line-height:26px}
.cell a{display:block;height:100%;color:inherit;text-decoration:none}.cell.none{background:#fff}.cell.sel{outline:3px solid #1b1f24}
.legend .state{font-size:.75rem}
.timeline{list-style:none;padding:0;margin:0}.timeline li{display:flex;flex-wrap:wrap;gap:8px;padding:6px 0;border-bottom:1px solid var(--line)}.timeline span{font-weight:600;min-width:110px}
.reason{min-width:11em;max-width:360px;overflow-wrap:anywhere}.list td code{overflow-wrap:anywhere}.plain{list-style:none;padding:0;margin:0}.plain li{padding:6px 0}
.ok{border:1px solid #1a7f37;background:#dafbe1;border-radius:8px;padding:4px 16px;margin:16px 0}
@media (max-width:640px){.strip{grid-template-columns:repeat(12,1fr)}.sections{margin-left:0;order:3;flex-basis:100%}main{padding:12px}.top{padding:10px 12px}.wide{display:none}.list th,.list td{padding:8px}progress{width:48px}.facts{grid-template-columns:1fr}.facts dd{margin-bottom:6px}}
`;

// Copy buttons copy exactly their data-copy value; times switch to the viewer's locale (UTC stays in the title).
const SCRIPT = `
(function(){
  var status=document.getElementById('status');
  function say(t){status.textContent='';setTimeout(function(){status.textContent=t},30)}
  function fallback(text){var a=document.createElement('textarea');a.value=text;a.setAttribute('readonly','');a.style.position='absolute';a.style.left='-9999px';document.body.appendChild(a);a.select();var ok=false;try{ok=document.execCommand('copy')}catch(e){}document.body.removeChild(a);return ok?Promise.resolve():Promise.reject(new Error('copy refused'))}
  document.querySelectorAll('button[data-copy]').forEach(function(b){
    b.addEventListener('click',function(){
      var text=b.getAttribute('data-copy');
      var p=navigator.clipboard&&window.isSecureContext?navigator.clipboard.writeText(text):fallback(text);
      p.then(function(){b.textContent='Copied';say('Copied to the clipboard');setTimeout(function(){b.textContent='Copy'},2000)},function(){say('Copy failed: select the text and copy it')});
    });
  });
  document.querySelectorAll('time[data-local]').forEach(function(t){
    var d=new Date(t.getAttribute('datetime'));if(!isNaN(d))t.textContent=d.toLocaleString();
  });
})();
`;
