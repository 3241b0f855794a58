import type { MessageEntity } from 'grammy/types';
import { parseMagnet } from '../../../lib/downloads/magnet';
import { findMagnets, hasMagnet, MAX_MAGNETS_PER_MESSAGE } from '../../../lib/telegram/magnets';

/** Magnets in what people type or paste to the bot (lib/telegram/magnets.ts), hostile input included. */

const hash = (n: number) => n.toString(16).padStart(40, '0');
const magnet = (n: number, extra = '') => `magnet:?xt=urn:btih:${hash(n)}${extra}`;

describe('findMagnets', () => {
  it('finds a magnet anywhere in the text, with the punctuation of the sentence left out', () => {
    const text = `look at this (${magnet(1, '&dn=Sintel')}), and this: ${magnet(2)}. Thanks!`;
    expect(findMagnets(text)).toEqual({ magnets: [magnet(1, '&dn=Sintel'), magnet(2)], dropped: 0 });
  });

  it('keeps what a pasted link carries: raw Cyrillic in dn, surrogate pairs, any case of the scheme', () => {
    const ru = `MAGNET:?xt=urn:btih:${hash(3)}&dn=Фильм 😀`;
    const found = findMagnets(`${ru}\n${magnet(4, '&dn=😀x')}`).magnets;
    expect(found).toEqual([`MAGNET:?xt=urn:btih:${hash(3)}&dn=Фильм`, magnet(4, '&dn=😀x')]);
    expect(parseMagnet(found[1]).name).toBe('😀x');
  });

  it('ends a magnet at a lone surrogate, a control, a bidi override or a Unicode space: never inside the link', () => {
    for (const stop of [
      '\ud800',
      '\udc00',
      '\u0000',
      '\u0085',
      '\u202e',
      '\u2066',
      '\u00a0',
      '\u2028',
      '\u3000',
      '\ufeff',
      '<',
      '"',
      '`',
    ]) {
      const [found] = findMagnets(`${magnet(5, '&dn=a')}${stop}b${stop}`).magnets;
      expect(found).toBe(magnet(5, '&dn=a'));
    }
    // A lone half of a pair right after the scheme leaves nothing to add.
    expect(findMagnets('magnet:?\udbff').magnets).toEqual([]);
    // The found text is well-formed UTF-16 whatever came in.
    const noisy = `${magnet(6)}&dn=x\udbffy ${magnet(7)}\udc00\ud800`;
    const lone = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
    expect(findMagnets(noisy).magnets).toEqual([`${magnet(6)}&dn=x`, magnet(7)]);
    for (const m of findMagnets(noisy).magnets) expect(lone.test(m)).toBe(false);
  });

  it('reads a hidden link of a text_link entity, and no other kind', () => {
    const entities: MessageEntity[] = [
      { type: 'text_link', offset: 0, length: 4, url: magnet(8) },
      { type: 'text_link', offset: 5, length: 4, url: 'https://example.org/x.torrent' },
      { type: 'url', offset: 0, length: 4 },
      { type: 'text_link', offset: 0, length: 4, url: `${magnet(9)} trailing words` },
    ];
    expect(findMagnets('here and there', entities).magnets).toEqual([magnet(8)]);
    // A forged Update's entities are not trusted to be the shape typings promise.
    expect(findMagnets('x', [null, 7, { type: 'text_link', url: 42 }] as unknown as MessageEntity[]).magnets).toEqual(
      [],
    );
    expect(findMagnets(42 as unknown as string).magnets).toEqual([]);
  });

  it('takes each magnet once, at most MAX_MAGNETS_PER_MESSAGE, and says how many more there were', () => {
    const many = Array.from({ length: 25 }, (_, i) => magnet(i + 1)).join(' ');
    const found = findMagnets(`${many} ${magnet(1)} ${magnet(2)}`);
    expect(found.magnets).toEqual(Array.from({ length: MAX_MAGNETS_PER_MESSAGE }, (_, i) => magnet(i + 1)));
    expect(found.dropped).toBe(25 - MAX_MAGNETS_PER_MESSAGE);
  });

  it('reads a 4,096-character message of magnets and noise quickly, and one glued run as one candidate', () => {
    const filler = 'magnet:?'.repeat(512); // 4,096 characters, no separators: one run
    let t = performance.now();
    expect(findMagnets(filler).magnets).toHaveLength(1);
    const dense = `${magnet(1)} `.repeat(100).slice(0, 4096);
    // 67 copies and the cut 68th (a truncated paste, refused later by parseMagnet): each once.
    expect(findMagnets(dense).magnets).toEqual([magnet(1), 'magnet:?x']);
    const noise = Array.from({ length: 4096 }, (_, i) => String.fromCharCode(0xd800 + (i % 2048))).join('');
    expect(findMagnets(noise).magnets).toEqual([]);
    expect(performance.now() - t).toBeLessThan(200);
    t = performance.now();
    expect(findMagnets('magnet:?x '.repeat(409)).magnets).toEqual(['magnet:?x']);
    expect(performance.now() - t).toBeLessThan(100);
  });

  it('finds nothing in text without a magnet; a bare scheme is nothing to add', () => {
    for (const text of ['', 'hello', 'magnet:', 'magnet:?', 'magnet:?.', 'see https://x.org/?magnet=1', undefined])
      expect(hasMagnet(text)).toBe(false);
  });
});
