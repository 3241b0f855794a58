import { CategoryConflictError, InvalidCategoryError } from '../../../lib/downloads/category';
import { addErrorOf, NEW_CATEGORY, parseAddForm } from '../../../lib/web/add-form';
import { addPage } from '../../../lib/web/add-page';
import { uiOf } from '../../../lib/web/locale';

/** The add form's category (decision 459): the list, or a new one's name under the root and its folder. */

const ROOT = 'torrent-scan-sync';
const V1 = 'a'.repeat(40);
const viewer = { principal: 'p', canWrite: true, scopes: [], csrf: 'c' };

describe('the add form: a category', () => {
  it('the default (empty or the root), one from the list, or a new one under the root with its folder', () => {
    expect(parseAddForm({ infohashes: V1, category: '' }, {}, ROOT)).toEqual({ request: { infohashes: [V1] } });
    expect(parseAddForm({ infohashes: V1, category: `${ROOT}/tv` }, {}, ROOT)).toEqual({
      request: { infohashes: [V1], category: `${ROOT}/tv` },
    });
    expect(
      parseAddForm(
        { infohashes: V1, category: NEW_CATEGORY, category_new: 'movies', category_save_path: 'Movies' },
        {},
        ROOT,
      ),
    ).toEqual({ request: { infohashes: [V1], category: `${ROOT}/movies`, category_save_path: 'Movies' } });
    // A name typed with the list left on the default is the new one: what the person meant.
    expect(parseAddForm({ infohashes: V1, category: '', category_new: 'movies' }, {}, ROOT)).toEqual({
      request: { infohashes: [V1], category: `${ROOT}/movies` },
    });
  });

  it('refuses beside the field: two choices, a new one unnamed, a folder without one, hostile names and folders', () => {
    const errorOf = (fields: Record<string, string>) => {
      const result = parseAddForm({ infohashes: V1, ...fields }, {}, ROOT);
      return 'errors' in result ? result.errors : undefined;
    };
    expect(errorOf({ category: `${ROOT}/tv`, category_new: 'movies' })).toEqual({
      category_new: { reason: 'categoryTwice' },
    });
    expect(errorOf({ category: NEW_CATEGORY })).toEqual({ category_new: { reason: 'categoryNewMissing' } });
    expect(errorOf({ category_save_path: 'Movies' })).toEqual({
      category_save_path: { reason: 'savePathWithoutNew' },
    });
    for (const bad of ['../x', 'a//b', '/abs', 'a/', '__proto__', 'a\uD800', 'x'.repeat(65), 'a/b/c/d'])
      expect(errorOf({ category_new: bad })?.category_new?.reason).toBe('invalidCategory');
    for (const bad of ['/etc', '../up', 'a/../b', 'C:\\x', 'a//b'])
      expect(errorOf({ category_new: 'ok', category_save_path: bad })?.category_save_path?.reason).toBe(
        'invalidCategory',
      );
  });

  it("the service's refusals go to their field", () => {
    const request = { infohashes: [V1], category: `${ROOT}/movies`, category_save_path: 'Movies' };
    expect(addErrorOf(new CategoryConflictError('exists'), request)).toEqual({
      category_save_path: { reason: 'categoryConflict', detail: 'exists' },
    });
    expect(addErrorOf(new CategoryConflictError('case'), { infohashes: [V1], category: `${ROOT}/m` })).toEqual({
      category_new: { reason: 'categoryConflict', detail: 'case' },
    });
    expect(addErrorOf(new InvalidCategoryError('category', 'bad'), request)?.category?.reason).toBe('invalidCategory');
  });

  // The category's own select (the page has others: the seeding goal's action).
  const categorySelectOf = (page: string) => /<select[^>]*name="category"[^>]*>.*?<\/select>/s.exec(page)![0];

  it('lists the recorded categories under the root (escaped), the default first, a new one last, the choice kept', () => {
    const categories = {
      root: ROOT,
      at: '2026-12-08T00:00:00.000Z',
      categories: [
        { name: `${ROOT}/movies`, save_path: 'Movies' },
        { name: `${ROOT}/<b>tv`, save_path: '' },
      ],
    };
    for (const lang of ['en', 'ru'] as const) {
      const page = addPage(uiOf(lang, 'UTC'), viewer, {
        categories,
        values: { fields: { category: `${ROOT}/movies` } },
      }).body.text;
      const options = [...categorySelectOf(page).matchAll(/<option value="([^"]*)"( selected)?>([^<]*)</g)].map((m) => [
        m[1],
        !!m[2],
        m[3],
      ]);
      expect(options.map((o) => o[0])).toEqual(['', `${ROOT}/movies`, `${ROOT}/&lt;b&gt;tv`, NEW_CATEGORY]);
      expect(options.filter((o) => o[1]).map((o) => o[0])).toEqual([`${ROOT}/movies`]);
      expect(options[0][2]).toContain(ROOT);
      expect(page).not.toContain('<b>tv');
    }
    // No record yet: the default and a new one.
    const bare = addPage(uiOf('en', 'UTC'), viewer, {}).body.text;
    expect([...categorySelectOf(bare).matchAll(/<option value="([^"]*)"/g)].map((m) => m[1])).toEqual([
      '',
      NEW_CATEGORY,
    ]);
  });
});
