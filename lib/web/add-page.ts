import type { CategoryRecord } from '../downloads/category';
import {
  ADD_FIELDS,
  NEW_CATEGORY,
  type AddErrors,
  type AddErrorPlace,
  type AddField,
  type AddGroup,
  type AddValues,
} from './add-form';
import { SHARE_ACTIONS } from '../downloads/share-goals';
import { Html, html, raw } from './html';
import type { Ui } from './locale';
import { csrfField, notice, Notice, Page, Viewer } from './shell';

/** The "Add a download" form (add-form.ts's fields), on the list page and alone at GET /download. */

/** What the add form shows again after a refusal: the person's input and the errors by field. */
export interface AddView {
  values?: AddValues;
  errors?: AddErrors;
  /** A refusal that is no field's (a 409 naming the owner). */
  notice?: Notice;
  /** The client's categories under ours as last recorded (category.ts): the category list's choices. */
  categories?: CategoryRecord;
}

/** The add form alone: where a refusal is shown (GET /download and the refused POST /download). */
export function addPage(ui: Ui, viewer: Viewer, view: AddView): Page {
  return {
    title: ui.t.addTitle,
    body: html`<p class="crumbs"><a href="/">${ui.t.allDownloads}</a></p>
${notice(ui, view.notice)}
${addForm(ui, viewer, view, 'h1')}`,
  };
}

/**
 * The form of ADD_FIELDS (lib/web/add-form.ts), by group: the sources (one of them), the main fields, the
 * advanced ones collapsed (open when one of them holds a value or an error). Multipart, for the file input.
 */
export function addForm(ui: Ui, viewer: Viewer, view: AddView, heading: 'h1' | 'h2' = 'h2'): Html {
  const t = ui.t;
  const errors = view.errors ?? {};
  const refused = Object.keys(errors).length > 0;
  const group = (g: AddGroup) => ADD_FIELDS.filter((f) => f.group === g).map((f) => addField(ui, f, view));
  const advanced = ADD_FIELDS.filter((f) => f.group === 'advanced').some(
    (f) => errors[f.name] || view.values?.fields[f.name as keyof AddValues['fields']],
  );
  const title =
    heading === 'h1' ? html`<h1 id="add-title">${t.addTitle}</h1>` : html`<h2 id="add-title">${t.addTitle}</h2>`;
  return html`<section class="card add-download" aria-labelledby="add-title">${title}
${refused ? html`<p class="notice" role="alert" data-add-refused>${t.addRefused}</p>` : ''}
<form method="post" action="/download" enctype="multipart/form-data">${csrfField(viewer)}
<fieldset class="sources"${errors.source ? raw(' aria-describedby="add-source-error"') : ''}><legend>${t.addSource}</legend>
<p class="muted hint">${t.addSourceHint}</p>${fieldError(ui, 'source', errors)}
${group('source')}</fieldset>
${group('main')}
<details class="advanced"${advanced ? raw(' open') : ''}><summary>${t.addAdvanced}</summary>${group('advanced')}</details>
<button type="submit">${t.addSubmit}</button></form></section>`;
}

function addField(ui: Ui, field: AddField, view: AddView): Html {
  const name = field.name as keyof typeof ui.t.addField;
  const { label, hint } = ui.t.addField[name];
  const id = `add-${field.name}`;
  const error = view.errors?.[name];
  const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const attrs = raw(
    `${describedBy ? ` aria-describedby="${describedBy}"` : ''}${error ? ' aria-invalid="true"' : ''}${field.mono ? ' class="mono"' : ''}`,
  );
  const value = view.values?.fields[name] ?? '';
  let input: Html;
  if (field.input === 'textarea')
    input = html`<textarea id="${id}" name="${field.name}" rows="2" maxlength="${field.max}" spellcheck="false"${attrs}>${value}</textarea>`;
  else if (field.input === 'file')
    input = html`<input id="${id}" name="${field.name}" type="file" accept=".torrent,application/x-bittorrent"${attrs}>${
      view.values?.torrentName
        ? html`<p class="muted hint" data-file-again>${ui.t.addFileAgain({ name: view.values.torrentName })}</p>`
        : ''
    }`;
  else if (field.input === 'ratio')
    input = html`<input id="${id}" name="${field.name}" type="text" inputmode="decimal" maxlength="7" value="${value}"${attrs}>`;
  else if (field.input === 'choice')
    input = html`<select id="${id}" name="${field.name}"${attrs}><option value="">${ui.t.shareActionDefault}</option>${SHARE_ACTIONS.map(
      (a) => html`<option value="${a}"${value === a ? raw(' selected') : ''}>${ui.t.shareActionOption[a]}</option>`,
    )}</select>`;
  else if (field.input === 'category') input = categorySelect(ui, id, field, value, view.categories, attrs);
  else if (field.input === 'seconds')
    input = html`<input id="${id}" name="${field.name}" type="number" inputmode="numeric" min="0" max="${field.max}" step="1" value="${value}"${attrs}>`;
  else
    input = html`<input id="${id}" name="${field.name}" type="text" maxlength="${field.max}" value="${value}"${attrs}>`;
  return html`<div class="field" data-field="${field.name}"><label for="${id}">${label}</label>${
    hint ? html`<p class="muted hint" id="${id}-hint">${hint}</p>` : ''
  }${fieldError(ui, name, view.errors ?? {})}${input}</div>`;
}

/** The default category, the recorded sub-categories (the part under the root, and a folder of their own), a new one. */
function categorySelect(
  ui: Ui,
  id: string,
  field: AddField,
  value: string,
  record: CategoryRecord | undefined,
  attrs: Html,
): Html {
  const option = (v: string, text: string) =>
    html`<option value="${v}"${v === value ? raw(' selected') : ''}>${text}</option>`;
  const subs = (record?.categories ?? []).map((c) => {
    const under = c.name.slice((record?.root.length ?? 0) + 1);
    return option(c.name, c.save_path ? `${under} · ${ui.t.addCategorySavePath({ path: c.save_path })}` : under);
  });
  return html`<select id="${id}" name="${field.name}"${attrs}>${option('', ui.t.addCategoryDefault({ name: record?.root }))}${subs}${option(NEW_CATEGORY, ui.t.addCategoryNew)}</select>`;
}

function fieldError(ui: Ui, place: AddErrorPlace, errors: AddErrors): Html {
  const error = errors[place];
  if (!error) return html``;
  return html`<p class="field-error" id="add-${place}-error" data-error-for="${place}">${ui.t.addError[error.reason]}${
    error.detail ? html` <span class="detail" lang="en">(${error.detail})</span>` : ''
  }</p>`;
}
