import fc from 'fast-check';
import { escapeHtml, html, raw } from '../../../lib/web/html';
import { safeNext } from '../../../lib/web/middlewares';

describe('html', () => {
  it('escapes every interpolated value, nested or not; only Html passes through', () => {
    const name = `<img src=x onerror=alert(1)>"'&\``;
    expect(html`<p title="${name}">${name}</p>`.text).toBe(
      '<p title="&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;&#96;">&lt;img src=x onerror=alert(1)&gt;&quot;&#39;&amp;&#96;</p>',
    );
    expect(html`<ul>${[name, html`<li>${name}</li>`]}</ul>`.text).toBe(
      `<ul>${escapeHtml(name)}<li>${escapeHtml(name)}</li></ul>`,
    );
    expect(html`${raw('<b>')}${undefined}${false}${0}`.text).toBe('<b>0');
  });

  it('never lets a markup character through, and loses nothing (fuzz)', () => {
    const unescape = (t: string) =>
      t.replace(
        /&(lt|gt|quot|#39|#96|amp);/g,
        (_m, e: string) => ({ lt: '<', gt: '>', quot: '"', '#39': "'", '#96': '`', amp: '&' })[e]!,
      );
    // Markup characters are drawn often on purpose: uniform code points would almost never hit them.
    const text = fc.oneof(
      fc.string({ unit: fc.constantFrom('<', '>', '"', "'", '`', '&', ';', '#', 'a', ' ') }),
      fc.string({ unit: 'binary' }),
    );
    fc.assert(
      fc.property(text, (s) => {
        const out = html`${s}`.text;
        return !/[<>"'`]/.test(out) && unescape(out) === s;
      }),
      { numRuns: 10_000 },
    );
  });

  it('sends sign-in back only to a page path of ours', () => {
    expect(safeNext('/download/01arz3ndektsv4rrffq69g5fav')).toBe('/download/01arz3ndektsv4rrffq69g5fav');
    for (const bad of ['//evil.example', 'https://evil.example/', '/download/x', '/\\evil', undefined])
      expect(safeNext(bad)).toBeUndefined();
  });
});
