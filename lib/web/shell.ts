import { Html, html, raw } from './html';
import type { Ui } from './locale';
import { CSS, SCRIPT } from './assets';
import { homeOf, sectionsFor } from './roles';

/**
 * The document around every page, and the pieces every page shares: times in
 * the configured zone, refusals, message pages. Inline style and script carry
 * the response's CSP nonce (lib/web/handler).
 */

export interface Viewer {
  principal: string;
  canWrite: boolean;
  /** The session's scopes: the links show only what the viewer may open. */
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

/** Each language named in itself, as a person looking for their own reads it. */
const LANGUAGE_NAMES = { ru: 'Русский', en: 'English' } as const;

export interface LayoutOptions {
  nonce: string;
  ui: Ui;
  viewer?: Viewer;
  /** This page's path and query, for the language links. */
  here?: string;
}

export function layout(page: Page, opts: LayoutOptions): string {
  const { viewer, nonce, ui } = opts;
  const t = ui.t;
  return (
    '<!doctype html>' +
    html`<html lang="${ui.lang}"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${page.title} · torrent-scan-sync</title><style nonce="${nonce}">${raw(CSS)}</style></head>
<body data-copy="${t.copy}" data-copied="${t.copied}" data-copied-status="${t.copiedStatus}" data-copy-failed="${t.copyFailed}"><a class="skip" href="#main">${t.skip}</a>
<header class="top"><a class="brand" href="${(viewer && homeOf(viewer.scopes)) ?? '/'}">torrent-scan-sync</a>${viewer ? nav(ui, viewer) : ''}${
      viewer
        ? html`<div class="who"><span>${t.signedInAs({ who: viewer.principal })}</span>
<form method="post" action="/signout">${csrfField(viewer)}<button type="submit" class="link">${t.signOut}</button></form></div>`
        : ''
    }</header>
<p class="zone">${ui.switchable ? languages(ui, opts.here ?? '/') : ''}<span>${t.timesIn({ zone: ui.f.zone() })}</span></p>
<main id="main">${page.body}</main>
<div id="status" class="visually-hidden" role="status" aria-live="polite"></div>
<script nonce="${nonce}">${raw(SCRIPT)}</script></body></html>`.text
  );
}

/** The sections a viewer may open: a link per scope held (the others answer 403 with a page saying why). */
function nav(ui: Ui, viewer: Viewer): Html {
  return html`<nav class="sections" aria-label="${ui.t.sections}">${sectionsFor(viewer.scopes).map(
    (s) => html`<a href="${s.href}">${ui.t.nav[s.section]}</a>`,
  )}</nav>`;
}

/** Links to this same page in each other language: `?lang=` sets the choice's cookie (lib/web/locale.ts). */
function languages(ui: Ui, here: string): Html {
  const url = new URL(here, 'http://x');
  const links = (Object.keys(LANGUAGE_NAMES) as Array<keyof typeof LANGUAGE_NAMES>).map((lang) => {
    if (lang === ui.lang) return html`<strong lang="${lang}" aria-current="true">${LANGUAGE_NAMES[lang]}</strong>`;
    url.searchParams.set('lang', lang);
    return html`<a href="${url.pathname + url.search}" lang="${lang}" hreflang="${lang}">${LANGUAGE_NAMES[lang]}</a>`;
  });
  return html`<span class="langs" role="group" aria-label="${ui.t.language}">${links}</span>`;
}

export function csrfField(viewer: Viewer): Html {
  return html`<input type="hidden" name="csrf" value="${viewer.csrf}">`;
}

/** A moment in the configured zone and language, formatted on the server; the exact UTC value on hover. */
export function time(ui: Ui, at: string | number): Html {
  const iso = typeof at === 'number' ? new Date(at).toISOString() : at;
  return html`<time datetime="${iso}" title="${iso}">${ui.f.dateTime(iso)}</time>`;
}

export function notice(ui: Ui, n: Notice | undefined): Html {
  if (!n) return html``;
  return html`<div class="notice" role="alert"><p><strong>${ui.t.refused({ code: n.code })}</strong> ${n.message}</p>${
    n.ownerId ? html`<p>${ui.t.currentOwner({ id: n.ownerId })}</p>` : ''
  }</div>`;
}

export function messagePage(ui: Ui, title: string, text: string, home = '/'): Page {
  return { title, body: html`<h1>${title}</h1><p>${text}</p><p><a href="${home}">${ui.t.backHome}</a></p>` };
}

/** A page the session's token cannot see: why, in the person's language, and where they can go. */
export function forbiddenPage(ui: Ui, scope: string, home: string | undefined): Page {
  return {
    title: ui.t.forbiddenTitle,
    body: html`<h1>${ui.t.forbiddenTitle}</h1><p>${ui.t.forbiddenText({ scope })}</p>${
      home ? html`<p><a href="${home}">${ui.t.backHome}</a></p>` : ''
    }`,
  };
}

export function pager(ui: Ui, prev: string | undefined, next: string | undefined, label?: string): Html {
  return html`<nav class="pager" aria-label="${ui.t.pages}">${prev ? html`<a href="${prev}" rel="prev">${ui.t.previousPage}</a>` : ''}${
    label ? html`<span class="muted">${label}</span>` : ''
  }${next ? html`<a href="${next}" rel="next">${ui.t.nextPage}</a>` : ''}</nav>`;
}

/**
 * An id that may wrap on a phone, but only between its segments: after a
 * `.`, `_`, `-`, `/` or `:`, and a long run (hex digests, ULIDs) in even
 * chunks of about 8. Each segment is one unbreakable span, so copying the
 * text still gives the id unchanged.
 */
export function idText(id: string): Html {
  const parts = id.match(/[^._\-/:]+[._\-/:]*|[._\-/:]+/g) ?? [id];
  const segments = parts.flatMap((p) => {
    if (p.length <= 16) return [p];
    const n = Math.ceil(p.length / 8);
    const size = Math.ceil(p.length / n);
    return Array.from({ length: Math.ceil(p.length / size) }, (_, i) => p.slice(i * size, (i + 1) * size));
  });
  return html`<span class="id">${segments.map((s, i) => html`${i ? raw('<wbr>') : ''}<span class="nb">${s}</span>`)}</span>`;
}
