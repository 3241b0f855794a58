import { uiOf } from '../../../lib/web/locale';
import { consoleMessages } from '../../../lib/web/messages/console';
import { uiMessages } from '../../../lib/web/messages/ui';
import { homeOf, sectionsFor } from '../../../lib/web/roles';
import { idText, layout, time } from '../../../lib/web/shell';

/** The shell's pieces: ids that wrap only between segments, times in the zone, the page's language, roles. */

const segments = (id: string) => [...idText(id).text.matchAll(/<span class="nb">([^<]*)<\/span>/g)].map((m) => m[1]);
const AT = '2026-12-06T01:55:03.000Z';

describe('idText', () => {
  it.each([
    ['catalog.enrichment', ['catalog.', 'enrichment']],
    ['DEPENDENCY_FAILED', ['DEPENDENCY_', 'FAILED']],
    ['a3f9c2e1b4d5f6a7b8c9d0e1f2a3b4c5', ['a3f9c2e1', 'b4d5f6a7', 'b8c9d0e1', 'f2a3b4c5']],
    ['01kbrtz4n4z5q0w9c8x7v6b5n4', ['01kbrtz', '4n4z5q0', 'w9c8x7v', '6b5n4']],
    ['3f2a9c1e-1b2c-4d5e-8f90-112233445566', ['3f2a9c1e-', '1b2c-', '4d5e-', '8f90-', '112233445566']],
    ['operations', ['operations']],
  ])('%s wraps only at %j', (id, parts) => {
    expect(segments(id)).toEqual(parts);
    expect(segments(id).join('')).toBe(id);
  });

  it('escapes what it splits', () => {
    expect(idText('<img src=x onerror=alert(1)>').text).not.toContain('<img');
  });
});

describe('the page in its language and zone', () => {
  it('formats a time in the configured zone, with the UTC value in datetime and on hover', () => {
    expect(time(uiOf('ru', 'Europe/Moscow'), AT).text).toBe(
      `<time datetime="${AT}" title="${AT}">6 дек. 2026 г., 04:55:03</time>`,
    );
    expect(time(uiOf('en', 'America/New_York'), Date.parse(AT)).text).toContain('>5 Dec 2026, 20:55:03</time>');
  });

  it('sets <html lang>, names the zone, and offers the other language unless one is fixed', () => {
    const page = { title: 't', body: idText('x') };
    const ru = layout(page, { nonce: 'n', ui: uiOf('ru', 'Europe/Moscow'), here: '/scan?phase=done' });
    expect(ru).toContain('<html lang="ru">');
    expect(ru).toContain('Время: Europe/Moscow (GMT+3)');
    expect(ru).toContain('href="/scan?phase=done&amp;lang=en"');
    const fixed = layout(page, { nonce: 'n', ui: uiOf('en', 'UTC', false) });
    expect(fixed).toContain('Times in UTC');
    expect(fixed).not.toContain('lang=ru');
  });

  it('Russian plurals in whole messages', () => {
    const c = consoleMessages('ru');
    expect(c.scanIntro({ hours: 24, jobs: 1, more: false })).toBe('Последние 24 часа: 1 задание, сначала новые.');
    expect(c.scanIntro({ hours: 24, jobs: 5, more: true })).toBe('Последние 24 часа: 5+ заданий, сначала новые.');
    expect(consoleMessages('en').scanIntro({ hours: 1, jobs: 1, more: false })).toBe(
      'The last hour: 1 job, newest first.',
    );
  });

  it('no message is empty in any language', () => {
    const walk = (o: unknown, path: string): string[] =>
      typeof o === 'string'
        ? o.trim()
          ? []
          : [path]
        : o && typeof o === 'object' && !('text' in o)
          ? Object.entries(o).flatMap(([k, v]) => walk(v, `${path}.${k}`))
          : [];
    for (const lang of ['ru', 'en'] as const) {
      expect(walk(uiMessages(lang), lang)).toEqual([]);
      expect(walk(consoleMessages(lang), lang)).toEqual([]);
    }
  });
});

describe('roles', () => {
  it.each([
    [['scan:read'], '/scan', ['/scan']],
    [['sync:read', 'health:read'], '/sync', ['/sync']],
    [['downloads:read', 'scan:read'], '/', ['/', '/scan', '/failures']],
    [['health:read'], undefined, []],
    [['downloads:write'], undefined, []],
  ])('%j lands on %s and sees %j', (scopes, home, hrefs) => {
    expect(homeOf(scopes)).toBe(home);
    expect(sectionsFor(scopes).map((s) => s.href)).toEqual(hrefs);
  });
});
