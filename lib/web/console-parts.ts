import { duration } from './charts';
import { Html, html } from './html';
import type { Ui } from './locale';
import { time } from './shell';

/** Pieces the console's pages share: a moment or a span that may be missing, a state pill, a table cell. */

export const at = (ui: Ui, ms: number | undefined): Html =>
  ms === undefined ? html`<span class="muted">–</span>` : time(ui, ms);

export const span = (ui: Ui, from: number | undefined, to: number | undefined): Html =>
  from === undefined || to === undefined
    ? html`<span class="muted">–</span>`
    : html`${duration(ui, Math.max(0, to - from))}`;

export function pill(kind: string, text: string, extra = ''): Html {
  return html`<span class="state st-${kind}${extra}"><span class="dot" aria-hidden="true"></span>${text}</span>`;
}

/** A table cell that, on a phone, shows its column's name beside its value (assets.ts). */
export function cell(label: string, content: Html | string | number, cls?: string): Html {
  return html`<td data-label="${label}"${cls ? html` class="${cls}"` : ''}>${content}</td>`;
}

/** The wrapper of a table that may scroll sideways on a desktop; on a phone its rows are cards. */
export function tableWrap(ui: Ui, table: Html): Html {
  return html`<div class="table-wrap" tabindex="0" role="region" aria-label="${ui.t.tableScrolls}">${table}</div>`;
}
