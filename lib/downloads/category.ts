import { DomainError } from '../errors';
import { LONE_SURROGATE } from '../names';
import type { TorrentClient } from '../torrents/client';
import { TorrentClientAnswerError } from '../torrents/errors';
import { inCategoryTree } from '../torrents/model';

export { inCategoryTree };

/**
 * Categories of downloads (decisions 458, 459): the product's tree in the torrent client is its default
 * category (TORRENT_CLIENT_CATEGORY) and qBittorrent sub-categories under it (`torrent-scan-sync/movies`).
 * Everything the poll follows, and every category a person may choose, is in that tree; names are compared
 * exactly, letter case included, as qBittorrent compares them (QString ==, its category map's keys).
 * A new category's save path is relative: qBittorrent resolves it under its own default save path
 * (SessionImpl::categorySavePath), so nothing chosen here can name a folder outside it.
 */

/** One level under the root: ASCII letters, digits, space . _ - (as TORRENT_CLIENT_CATEGORY), no trailing space or dot. */
const SEGMENT = /^[A-Za-z0-9](?:[A-Za-z0-9 ._-]{0,62}[A-Za-z0-9_-])?$/;
/** Levels a sub-category may have under the root (`root/a/b/c`). */
export const MAX_CATEGORY_DEPTH = 3;
export const MAX_CATEGORY_LENGTH = 64 * (MAX_CATEGORY_DEPTH + 1) + MAX_CATEGORY_DEPTH;
const MAX_SAVE_PATH_SEGMENTS = 8;
export const MAX_SAVE_PATH_LENGTH = 512;

export class InvalidCategoryError extends DomainError {
  readonly code = 'INVALID_CATEGORY';
  readonly status = 400;
  constructor(
    readonly field: 'category' | 'category_save_path',
    reason: string,
  ) {
    super(`${field}: ${reason}`, { field });
  }
}

/** The category exists in the client with another save path, or differs from one only in letter case. */
export class CategoryConflictError extends DomainError {
  readonly code = 'CATEGORY_CONFLICT';
  readonly status = 409;
  constructor(reason: string, details: Record<string, unknown> = {}) {
    super(reason, details);
  }
}

/**
 * A category a person chose: the root, or `root/<1 to 3 levels>`. Returns the name as given (never
 * re-cased: qBittorrent would take another case as another category, outside our tree).
 */
export function parseCategory(root: string, input: unknown): string {
  if (typeof input !== 'string' || input === '') throw new InvalidCategoryError('category', 'must be a name');
  if (input.length > MAX_CATEGORY_LENGTH)
    throw new InvalidCategoryError('category', `longer than ${MAX_CATEGORY_LENGTH} characters`);
  if (LONE_SURROGATE.test(input) || /[^\u0020-\u007e]/.test(input))
    throw new InvalidCategoryError('category', 'only ASCII letters, digits, spaces and . _ - / are allowed');
  if (input === root) return input;
  if (!input.startsWith(`${root}/`)) {
    const sameButCase =
      input.toLowerCase() === root.toLowerCase() || input.toLowerCase().startsWith(`${root.toLowerCase()}/`);
    throw new InvalidCategoryError(
      'category',
      sameButCase
        ? `must start with ${root}/ in this letter case (qBittorrent compares categories case-sensitively)`
        : `must be ${root} or a sub-category under ${root}/`,
    );
  }
  const levels = input.slice(root.length + 1).split('/');
  if (levels.length > MAX_CATEGORY_DEPTH)
    throw new InvalidCategoryError('category', `at most ${MAX_CATEGORY_DEPTH} levels under ${root}/`);
  for (const level of levels) {
    if (level === '') throw new InvalidCategoryError('category', 'has an empty level (// or a trailing /)');
    if (level === '.' || level === '..') throw new InvalidCategoryError('category', 'has a . or .. level');
    if (!SEGMENT.test(level))
      throw new InvalidCategoryError(
        'category',
        `level ${JSON.stringify(level.slice(0, 70))} must be 1-64 letters, digits, spaces, . _ - starting with a letter or digit, not ending in a space or dot`,
      );
  }
  return input;
}

/**
 * A new category's save path: relative to the client's default save path, `/`-separated, each level a plain
 * folder name. Absolute paths, drives, `.`/`..`, backslashes and control characters are refused.
 */
export function parseSavePath(input: unknown): string {
  if (typeof input !== 'string' || input === '')
    throw new InvalidCategoryError('category_save_path', 'must be a folder');
  if (input.length > MAX_SAVE_PATH_LENGTH)
    throw new InvalidCategoryError('category_save_path', `longer than ${MAX_SAVE_PATH_LENGTH} characters`);
  if (LONE_SURROGATE.test(input))
    throw new InvalidCategoryError('category_save_path', 'contains a lone surrogate (not valid Unicode)');
  if (/[\u0000-\u001f\u007f-\u009f\\]/.test(input))
    throw new InvalidCategoryError('category_save_path', 'contains a control character or a backslash');
  if (input.startsWith('/') || /^[A-Za-z]:/.test(input) || input.startsWith('~'))
    throw new InvalidCategoryError(
      'category_save_path',
      "must be relative: it is a folder under the torrent client's default save path",
    );
  const levels = input.split('/');
  if (levels.length > MAX_SAVE_PATH_SEGMENTS)
    throw new InvalidCategoryError('category_save_path', `at most ${MAX_SAVE_PATH_SEGMENTS} levels`);
  for (const level of levels) {
    if (level === '') throw new InvalidCategoryError('category_save_path', 'has an empty level (// or a trailing /)');
    if (level === '.' || level === '..') throw new InvalidCategoryError('category_save_path', 'has a . or .. level');
    if (level.trim() !== level || level.endsWith('.'))
      throw new InvalidCategoryError('category_save_path', 'a level starts or ends with a space, or ends with a dot');
    if (/[*?:<>|"]/.test(level)) throw new InvalidCategoryError('category_save_path', 'contains one of * ? : < > | "');
  }
  return input.normalize('NFC');
}

/** A category as the client lists it (torrents/categories): its save path as stored, "" = the client's rule. */
export interface ClientCategory {
  name: string;
  save_path: string;
}

/** What a request asks for: a category (the default when absent) and, for a new sub-category, its save path. */
export interface CategoryChoice {
  category?: string;
  category_save_path?: string;
}

/**
 * The sub-category a request chose, validated (no I/O): undefined for the default category. A save path
 * without a sub-category is refused: the default category's folder is the client's own setting.
 */
export function chosenCategory(root: string, choice: CategoryChoice): { name: string; savePath?: string } | undefined {
  const name = choice.category === undefined ? undefined : parseCategory(root, choice.category);
  const savePath = choice.category_save_path === undefined ? undefined : parseSavePath(choice.category_save_path);
  if (name === undefined || name === root) {
    if (savePath !== undefined)
      throw new InvalidCategoryError('category_save_path', `is for a new sub-category: choose one under ${root}/`);
    return undefined;
  }
  return { name, ...(savePath !== undefined ? { savePath } : {}) };
}

/**
 * Makes sure the client has the category, creating it with the save path when it has none (true: this call
 * created it). Two adds creating
 * one new category at once: one create wins, the other's 409 reads the winner's, and both go on when the save
 * paths agree. Refused (CategoryConflictError, nothing written) when it exists with another save path, or when
 * the client has a name that differs only in letter case (two folders on a case-insensitive disk, or one).
 */
export async function ensureCategory(
  client: Pick<TorrentClient, 'categories' | 'createCategory'>,
  wanted: { name: string; savePath?: string },
): Promise<boolean> {
  const known = await client.categories();
  let found = known.get(wanted.name);
  if (!found) {
    const lower = wanted.name.toLowerCase();
    const twin = [...known.keys()].find((k) => k.toLowerCase() === lower);
    if (twin)
      throw new CategoryConflictError(
        `category ${JSON.stringify(wanted.name)} differs from the client's ${JSON.stringify(twin)} only in letter case`,
        { category: twin },
      );
    if (await client.createCategory(wanted.name, wanted.savePath ?? '')) return true;
    found = (await client.categories()).get(wanted.name);
    if (!found) throw new TorrentClientAnswerError(`torrents/createCategory refused ${JSON.stringify(wanted.name)}`);
  }
  const existing = normalisedPath(found.savePath);
  if (wanted.savePath !== undefined && existing !== wanted.savePath)
    throw new CategoryConflictError(
      `category ${JSON.stringify(wanted.name)} exists with the save path ${JSON.stringify(existing || '(the default)')}`,
      { category: wanted.name, save_path: existing },
    );
  return false;
}

/** A path as the client stores it, compared with ours: NFC, no trailing separators. */
function normalisedPath(path: string): string {
  return path.normalize('NFC').replace(/\/+$/, '');
}

/**
 * The client's categories in the product's tree, as last seen (the web form lists them: the pages' function
 * has no torrent-client secret). Written by the poll on full updates and by an add that created one.
 */
export interface CategoryRecord {
  /** TORRENT_CLIENT_CATEGORY when it was written: a record of another root lists nothing. */
  root: string;
  categories: ClientCategory[];
  at: string;
}

export interface CategoryRecordStore {
  record(record: CategoryRecord): Promise<void>;
  read(): Promise<CategoryRecord | undefined>;
}

/** At most this many categories are kept in the record (and shown in the form), in name order. */
export const MAX_RECORDED_CATEGORIES = 200;

/** The record of a client's categories: the tree only, sorted, bounded; none but the root's own. */
export function categoryRecordOf(
  root: string,
  all: Iterable<{ name: string; savePath: string }>,
  at: string,
): CategoryRecord {
  const categories = [...all]
    .filter((c) => c.name !== root && inCategoryTree(root, c.name))
    .map((c) => ({ name: c.name, save_path: c.savePath }))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .slice(0, MAX_RECORDED_CATEGORIES);
  return { root, categories, at };
}

/** Whether two records list the same categories (the poll writes only a change). */
export function sameCategories(a: CategoryRecord | undefined, b: CategoryRecord): boolean {
  return (
    !!a &&
    a.root === b.root &&
    a.categories.length === b.categories.length &&
    a.categories.every((c, i) => c.name === b.categories[i].name && c.save_path === b.categories[i].save_path)
  );
}

/** The poll's look at the client's categories (full updates): the record rewritten when the tree changed. */
export async function refreshCategoryRecord(
  client: Pick<TorrentClient, 'category' | 'categories'>,
  records: CategoryRecordStore,
  at: string,
): Promise<void> {
  const next = categoryRecordOf(client.category, (await client.categories()).values(), at);
  if (!sameCategories(await records.read(), next)) await records.record(next);
}

/** An add that created a category puts it in the record at once (the poll's next full look confirms it). */
export async function rememberCategory(
  root: string,
  records: CategoryRecordStore,
  category: { name: string; savePath?: string },
  at: string,
): Promise<void> {
  const last = await records.read();
  const known = last?.root === root ? last.categories : [];
  if (known.some((c) => c.name === category.name)) return;
  const all = [
    ...known.map((c) => ({ name: c.name, savePath: c.save_path })),
    {
      name: category.name,
      savePath: category.savePath ?? '',
    },
  ];
  await records.record(categoryRecordOf(root, all, at));
}
