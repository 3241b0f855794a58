/**
 * The emulated client's categories, as qBittorrent keeps them (src/base/bittorrent/sessionimpl.cpp, 4.6 to 5.2):
 * - Session::isValidCategoryName: no `\`, no leading or trailing `/`, no `//`;
 * - addCategory refuses an empty, invalid or existing name (createCategory then answers 409), and with
 *   sub-categories enabled (Session\SubcategoriesEnabled, off by default) creates the missing parents;
 * - torrents/add with an unknown category creates it (options empty);
 * - TorrentImpl::belongsToCategory: the exact name, or, with sub-categories enabled, any `name/…`;
 * - categorySavePath: an absolute save path as is, a relative one under the default save path, an empty one
 *   the category's name (its last level under the parent's path with sub-categories enabled).
 */

const VALID = /^([^\\/]|[^\\/]([^\\/]|\/(?=[^/]))*[^\\/])$/;

export class CategoryTable {
  /** name → its save path as given ("" = the implicit one). A Map: names are the caller's data. */
  readonly categories = new Map<string, string>();
  subcategories = false;
  defaultSavePath = '/downloads';

  static isValidName(name: string): boolean {
    return name === '' || VALID.test(name);
  }

  add(name: string, savePath = ''): boolean {
    if (name === '' || !CategoryTable.isValidName(name) || this.categories.has(name)) return false;
    if (this.subcategories) {
      const levels = name.split('/');
      for (let i = 1; i < levels.length; i++) {
        const parent = levels.slice(0, i).join('/');
        if (!this.categories.has(parent)) this.categories.set(parent, '');
      }
    }
    this.categories.set(name, savePath);
    return true;
  }

  belongsTo(torrentCategory: string, filter: string): boolean {
    if (torrentCategory === '') return filter === '';
    if (torrentCategory === filter) return true;
    return this.subcategories && torrentCategory.startsWith(`${filter}/`);
  }

  savePath(name: string): string {
    if (name === '') return this.defaultSavePath;
    const own = this.categories.get(name) ?? '';
    if (own.startsWith('/')) return own;
    if (own !== '') return `${this.defaultSavePath}/${own}`;
    if (!this.subcategories || !name.includes('/')) return `${this.defaultSavePath}/${name}`;
    const cut = name.lastIndexOf('/');
    return `${this.savePath(name.slice(0, cut))}/${name.slice(cut + 1)}`;
  }

  /** torrents/categories: {name: {name, savePath}} (TorrentsController::categoriesAction). */
  answer(): Record<string, { name: string; savePath: string }> {
    const out: Record<string, { name: string; savePath: string }> = {};
    for (const [name, savePath] of this.categories)
      Object.defineProperty(out, name, { value: { name, savePath }, enumerable: true, writable: true });
    return out;
  }
}
