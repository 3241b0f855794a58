import type { MessageEntity } from './objects';

/**
 * Telegram's parse_mode HTML, as far as the emulator needs it: the tags it
 * accepts, `<`, `>` and `&` only as tags or entities, balanced nesting. A
 * message that breaks a rule is refused like Telegram does (400 can't parse
 * entities), which is what makes an unescaped download name visible in tests.
 */
const TAGS = new Set([
  'b',
  'strong',
  'i',
  'em',
  'u',
  'ins',
  's',
  'strike',
  'del',
  'a',
  'code',
  'pre',
  'tg-spoiler',
  'span',
  'blockquote',
  'tg-emoji',
]);
const ENTITY = /^&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/;
const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"' };

export class HtmlParseError extends Error {}

/** The plain text of an HTML message; throws HtmlParseError with Telegram's wording. */
export function htmlToPlain(html: string): string {
  return parseHtml(html).text;
}

/**
 * The text Telegram shows and the entities its tags become (offsets and lengths in UTF-16 code
 * units, as the Bot API counts them; empty ones dropped). Entities Telegram detects by itself in
 * plain text (links, /commands, @mentions) are not derived.
 */
export function parseHtml(html: string): { text: string; entities: MessageEntity[] } {
  const open: Array<{ tag: string; start: number; attrs: Record<string, string> }> = [];
  const entities: MessageEntity[] = [];
  let plain = '';
  let i = 0;
  while (i < html.length) {
    const ch = html[i];
    if (ch === '<') {
      const m = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-z-]+(?:="[^"<>]*")?)*)\s*>/.exec(html.slice(i));
      if (!m) throw new HtmlParseError(`Can't parse entities: unexpected "<" at byte offset ${i}`);
      const [all, closing, name, attrText] = m;
      const tag = name.toLowerCase();
      if (!TAGS.has(tag))
        throw new HtmlParseError(`Can't parse entities: unsupported start tag "${tag}" at byte offset ${i}`);
      if (closing) {
        const opened = open.pop();
        if (opened?.tag !== tag)
          throw new HtmlParseError(`Can't parse entities: can't find end tag corresponding to start tag "${tag}"`);
        const entity = entityOf(opened, open, plain.length - opened.start);
        if (entity) entities.push(entity);
      } else open.push({ tag, start: plain.length, attrs: attributes(attrText) });
      i += all.length;
    } else if (ch === '&') {
      const m = ENTITY.exec(html.slice(i));
      if (!m) throw new HtmlParseError(`Can't parse entities: character '&' is reserved at byte offset ${i}`);
      plain += decodeEntity(m[1]);
      i += m[0].length;
    } else if (ch === '>') {
      throw new HtmlParseError(`Can't parse entities: character '>' is reserved at byte offset ${i}`);
    } else {
      plain += ch;
      i += 1;
    }
  }
  if (open.length > 0)
    throw new HtmlParseError(
      `Can't parse entities: can't find end tag corresponding to start tag "${open[open.length - 1].tag}"`,
    );
  entities.sort((a, b) => a.offset - b.offset || b.length - a.length);
  return { text: plain, entities };
}

const SIMPLE: Record<string, string> = {
  b: 'bold',
  strong: 'bold',
  i: 'italic',
  em: 'italic',
  u: 'underline',
  ins: 'underline',
  s: 'strikethrough',
  strike: 'strikethrough',
  del: 'strikethrough',
  'tg-spoiler': 'spoiler',
};

/** The entity a closed tag makes (Bot API "HTML style"); `<code>` inside `<pre>` names the pre's language. */
function entityOf(
  el: { tag: string; start: number; attrs: Record<string, string> },
  outer: Array<{ tag: string; attrs: Record<string, string> }>,
  length: number,
): MessageEntity | undefined {
  if (length === 0) return undefined;
  const at = { offset: el.start, length };
  if (SIMPLE[el.tag]) return { type: SIMPLE[el.tag], ...at };
  switch (el.tag) {
    case 'a':
      return el.attrs.href ? { type: 'text_link', ...at, url: el.attrs.href } : undefined;
    case 'code':
      if (outer.at(-1)?.tag === 'pre') {
        const language = /^language-(.+)$/.exec(el.attrs.class ?? '')?.[1];
        if (language) outer.at(-1)!.attrs['data-language'] = language;
        return undefined;
      }
      return { type: 'code', ...at };
    case 'pre': {
      const language = el.attrs['data-language'];
      return { type: 'pre', ...at, ...(language ? { language } : {}) };
    }
    case 'span':
      return el.attrs.class === 'tg-spoiler' ? { type: 'spoiler', ...at } : undefined;
    case 'blockquote':
      return { type: 'expandable' in el.attrs ? 'expandable_blockquote' : 'blockquote', ...at };
    case 'tg-emoji':
      return el.attrs['emoji-id'] ? { type: 'custom_emoji', ...at, custom_emoji_id: el.attrs['emoji-id'] } : undefined;
    default:
      return undefined;
  }
}

function attributes(text: string): Record<string, string> {
  const attrs: Record<string, string> = {};
  for (const m of text.matchAll(/([a-z-]+)(?:="([^"<>]*)")?/g))
    attrs[m[1]] = (m[2] ?? '').replace(/&(lt|gt|amp|quot|#\d{1,7}|#x[0-9a-fA-F]{1,6});/g, (_, n: string) =>
      decodeEntity(n),
    );
  return attrs;
}

function decodeEntity(name: string): string {
  return (
    NAMED[name] ??
    String.fromCodePoint(name.startsWith('#x') ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10))
  );
}
