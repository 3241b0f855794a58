import {
  CategoryConflictError,
  InvalidCategoryError,
  MAX_CATEGORY_LENGTH,
  MAX_SAVE_PATH_LENGTH,
  parseCategory,
  parseSavePath,
} from '../downloads/category';
import { InvalidInfohashError, InvalidMagnetError, InvalidTorrentError } from '../downloads/errors';
import { MAX_INFOHASHES } from '../downloads/infohash';
import { MAX_TIMEOUT_S } from '../downloads/lifecycle';
import { MAX_MAGNET_LENGTH } from '../downloads/magnet';
import { MAX_TORRENT_BODY_BYTES } from '../downloads/requests';
import { MAX_SHARE_RATIO, MAX_SHARE_TIME_S, SHARE_ACTIONS } from '../downloads/share-goals';
import type { IngestRequest } from '../downloads/service';
import { MAX_TORRENT_BYTES } from '../downloads/torrent-file';
import { ErrorCode, HttpError } from '../http/errors';
import { InvalidFileNameError } from '../names';
import type { FileForms, FormFile } from './forms';

/**
 * The web UI's "Add a download" form (decision 405): its fields in ONE table, read into the SAME
 * `IngestRequest` that POST /downloads hands to `ingest` (lib/downloads/service.ts). The shape of the
 * form is checked here, field by field, so each refusal is shown beside its field; what a value means
 * (a magnet, a hash, a .torrent) is the service's parse, and its refusals are mapped back to their field.
 *
 * A new field (a seeding goal, a category) is one row of ADD_FIELDS, plus its label in each message
 * catalogue (the compiler asks for both): a `text` or `seconds` row is copied into the request under
 * its name.
 */

/** The add form's route takes multipart (its file input), bounded as POST /downloads' body (decision 406). */
export const ADD_FILE_FORMS: FileForms = { 'POST /download': MAX_TORRENT_BODY_BYTES };

/** `ratio`: a decimal (a seeding goal); `choice`: one of SHARE_ACTIONS (a select); `category`: the category list. */
export type AddInput = 'textarea' | 'text' | 'file' | 'seconds' | 'ratio' | 'choice' | 'category';
/** `source`: exactly one is given; `main`: always shown; `advanced`: in the collapsed section. */
export type AddGroup = 'source' | 'main' | 'advanced';

export interface AddField {
  name: string;
  input: AddInput;
  group: AddGroup;
  /** Characters, for text; bytes, for a file. */
  max: number;
  /** A monospace input (hashes, links). */
  mono?: boolean;
}

export const ADD_FIELDS = [
  { name: 'magnet', input: 'textarea', group: 'source', max: MAX_MAGNET_LENGTH, mono: true },
  // One per line (or comma-separated), as the card's "Add infohashes" takes them: 64 hex each at most.
  { name: 'infohashes', input: 'textarea', group: 'source', max: MAX_INFOHASHES * 66, mono: true },
  { name: 'torrent', input: 'file', group: 'source', max: MAX_TORRENT_BYTES },
  { name: 'name', input: 'text', group: 'main', max: 1024 },
  // A category (decision 459): the list of the client's under ours, or a new one's name under ours and its folder.
  { name: 'category', input: 'category', group: 'main', max: MAX_CATEGORY_LENGTH },
  { name: 'category_new', input: 'text', group: 'main', max: MAX_CATEGORY_LENGTH },
  { name: 'category_save_path', input: 'text', group: 'main', max: MAX_SAVE_PATH_LENGTH },
  { name: 'metadata_timeout_s', input: 'seconds', group: 'advanced', max: MAX_TIMEOUT_S },
  { name: 'stall_timeout_s', input: 'seconds', group: 'advanced', max: MAX_TIMEOUT_S },
  // The seeding goal (share-goals.ts): empty = the service's default.
  { name: 'share_ratio', input: 'ratio', group: 'advanced', max: MAX_SHARE_RATIO },
  { name: 'share_time_s', input: 'seconds', group: 'advanced', max: MAX_SHARE_TIME_S },
  { name: 'share_action', input: 'choice', group: 'advanced', max: 16 },
] as const satisfies readonly AddField[];

export type AddFieldName = (typeof ADD_FIELDS)[number]['name'];
/** Where an error is shown: beside a field, or beside the source group (none or two given). */
export type AddErrorPlace = AddFieldName | 'source';

/** Why a field was refused; each has a sentence in each language (ui-types.ts `addError`). */
export type AddErrorReason =
  | 'noSource'
  | 'twoSources'
  | 'tooLong'
  | 'notSeconds'
  | 'notShareSeconds'
  | 'notRatio'
  | 'notShareAction'
  | 'tooLarge'
  | 'invalidMagnet'
  | 'invalidInfohash'
  | 'invalidTorrent'
  | 'invalidName'
  | 'nameWithMagnet'
  | 'invalidCategory'
  | 'categoryConflict'
  | 'categoryTwice'
  | 'categoryNewMissing'
  | 'savePathWithoutNew';

/** The category list's "new category" choice: no category name can be it (none starts with `+` under ours). */
export const NEW_CATEGORY = '+new';

export interface AddFieldError {
  reason: AddErrorReason;
  /** The service's own reason, in English (the API's message), shown under the sentence. */
  detail?: string;
}

export type AddErrors = Partial<Record<AddErrorPlace, AddFieldError>>;

/** What the person typed, kept to fill the form again (a file input cannot be refilled: only its name is kept). */
export interface AddValues {
  fields: Partial<Record<AddFieldName, string>>;
  torrentName?: string;
}

export type AddFormResult = { request: IngestRequest } | { errors: AddErrors };

const SOURCES = ADD_FIELDS.filter((f) => f.group === 'source').map((f) => f.name);
const byName = new Map<string, AddField>(ADD_FIELDS.map((f) => [f.name, f]));

/**
 * The form's fields (text) and files as the request for `ingest`, or the errors by field. A field the form
 * does not have, or a file in a text field, is a crafted request, not a person's mistake: a plain 400.
 */
export function parseAddForm(
  fields: Record<string, string>,
  files: Record<string, FormFile>,
  /** TORRENT_CLIENT_CATEGORY: a new category's name is under it. */
  categoryRoot?: string,
): AddFormResult {
  for (const name of Object.keys(fields))
    if (byName.get(name)?.input === 'file' || !byName.has(name)) throw unknownField(name);
  for (const name of Object.keys(files)) if (byName.get(name)?.input !== 'file') throw unknownField(name);

  const errors: AddErrors = {};
  const values: Record<string, string | number | Uint8Array> = {};
  for (const field of ADD_FIELDS) {
    if (field.input === 'file') {
      const file = files[field.name];
      // A file input left empty is sent as a part with no file name and no bytes.
      if (!file || (file.filename === '' && file.data.length === 0)) continue;
      if (file.data.length > field.max) errors[field.name] = { reason: 'tooLarge' };
      else values[field.name] = file.data;
      continue;
    }
    const raw = fields[field.name]?.trim() ?? '';
    if (raw === '') continue;
    if (field.input === 'seconds') {
      const seconds = /^[0-9]{1,10}$/.test(raw) ? Number(raw) : NaN;
      if (!(seconds <= field.max))
        errors[field.name] = { reason: field.name === 'share_time_s' ? 'notShareSeconds' : 'notSeconds' };
      else values[field.name] = seconds;
    } else if (field.input === 'ratio') {
      const ratio = /^[0-9]{1,4}([.,][0-9]{1,2})?$/.test(raw) ? Number(raw.replace(',', '.')) : NaN;
      if (!(ratio <= field.max)) errors[field.name] = { reason: 'notRatio' };
      else values[field.name] = ratio;
    } else if (field.input === 'choice') {
      if (!(SHARE_ACTIONS as readonly string[]).includes(raw)) errors[field.name] = { reason: 'notShareAction' };
      else values[field.name] = raw;
    } else if (raw.length > field.max) errors[field.name] = { reason: 'tooLong' };
    else values[field.name] = raw;
  }

  const given = SOURCES.filter((s) => s in values || s in errors);
  if (given.length === 0) errors.source = { reason: 'noSource' };
  if (given.length > 1) errors.source = { reason: 'twoSources' };
  // POST /downloads takes no name with a magnet either: the magnet's own (dn) is its name.
  if (given.length === 1 && given[0] === 'magnet' && 'name' in values) errors.name = { reason: 'nameWithMagnet' };
  const category = formCategory(values, errors, categoryRoot);
  if (Object.keys(errors).length > 0) return { errors };

  const { magnet, infohashes, torrent, category: _picked, category_new: _new, ...rest } = values;
  const request: Record<string, unknown> = { ...rest, ...category };
  if (typeof magnet === 'string') request.magnet = magnet;
  else if (typeof infohashes === 'string') request.infohashes = infohashes.split(/[\s,]+/).filter(Boolean);
  else request.torrent = torrent;
  return { request: request as unknown as IngestRequest };
}

/**
 * The list's choice, or a new category's name (under the root) and folder, checked here so each refusal is
 * beside its field; the service checks them again and makes sure of the category in the client.
 */
function formCategory(
  values: Record<string, unknown>,
  errors: AddErrors,
  root: string | undefined,
): { category?: string; category_save_path?: string } {
  const picked = typeof values.category === 'string' ? values.category : undefined;
  const typed = typeof values.category_new === 'string' ? values.category_new : undefined;
  const savePath = typeof values.category_save_path === 'string' ? values.category_save_path : undefined;
  if (savePath !== undefined && typed === undefined) errors.category_save_path = { reason: 'savePathWithoutNew' };
  if (typed === undefined) {
    if (picked === NEW_CATEGORY) errors.category_new = { reason: 'categoryNewMissing' };
    return picked === undefined || picked === NEW_CATEGORY ? {} : { category: picked };
  }
  if (picked !== undefined && picked !== NEW_CATEGORY && picked !== root) {
    errors.category_new = { reason: 'categoryTwice' };
    return {};
  }
  if (root === undefined) {
    errors.category_new = { reason: 'invalidCategory', detail: 'the torrent client is not configured' };
    return {};
  }
  const out: { category?: string; category_save_path?: string } = {};
  try {
    out.category = parseCategory(root, `${root}/${typed}`);
  } catch (err) {
    errors.category_new = { reason: 'invalidCategory', detail: (err as Error).message };
  }
  if (savePath !== undefined)
    try {
      out.category_save_path = parseSavePath(savePath);
    } catch (err) {
      errors.category_save_path = { reason: 'invalidCategory', detail: (err as Error).message };
    }
  return out;
}

/** What the form shows again after a refusal: the text as typed, the chosen file's name. */
export function addValuesOf(fields: Record<string, string>, files: Record<string, FormFile>): AddValues {
  const kept: AddValues['fields'] = {};
  for (const field of ADD_FIELDS)
    if (field.input !== 'file' && typeof fields[field.name] === 'string') kept[field.name] = fields[field.name];
  const torrent = files.torrent?.filename;
  return { fields: kept, ...(torrent ? { torrentName: torrent } : {}) };
}

/**
 * A refusal of `ingest` as an error beside its field, or undefined when it is not a field's (a 409, storage):
 * the caller shows those as the API's notice or error page.
 */
export function addErrorOf(err: unknown, request: IngestRequest): AddErrors | undefined {
  const source: AddFieldName = 'magnet' in request ? 'magnet' : 'torrent' in request ? 'torrent' : 'infohashes';
  const detail = err instanceof Error ? err.message : undefined;
  if (err instanceof InvalidMagnetError) return { magnet: { reason: 'invalidMagnet', detail } };
  if (err instanceof InvalidInfohashError) return { infohashes: { reason: 'invalidInfohash', detail } };
  if (err instanceof InvalidTorrentError) return { torrent: { reason: 'invalidTorrent', detail } };
  // The form checked a new name and folder itself: the service's refusal is the list's (a crafted value), and
  // a conflict is a new category's (another folder, or a name differing only in case).
  if (err instanceof InvalidCategoryError)
    return err.field === 'category_save_path'
      ? { category_save_path: { reason: 'invalidCategory', detail } }
      : { category: { reason: 'invalidCategory', detail } };
  if (err instanceof CategoryConflictError)
    return 'category_save_path' in request
      ? { category_save_path: { reason: 'categoryConflict', detail } }
      : { category_new: { reason: 'categoryConflict', detail } };
  // A name we were given is the name field's; else the source brought it (a magnet's dn).
  if (err instanceof InvalidFileNameError)
    return 'name' in request && request.name !== undefined
      ? { name: { reason: 'invalidName', detail } }
      : { [source]: { reason: source === 'magnet' ? 'invalidMagnet' : 'invalidTorrent', detail } };
  return undefined;
}

const unknownField = (name: string) =>
  new HttpError(400, ErrorCode.INVALID_REQUEST, `unknown form field ${JSON.stringify(name.slice(0, 40))}`);
