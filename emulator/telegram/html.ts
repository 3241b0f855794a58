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
  const open: string[] = [];
  let plain = '';
  let i = 0;
  while (i < html.length) {
    const ch = html[i];
    if (ch === '<') {
      const m = /^<(\/?)([a-zA-Z][a-zA-Z0-9-]*)((?:\s+[a-z-]+(?:="[^"<>]*")?)*)\s*>/.exec(html.slice(i));
      if (!m) throw new HtmlParseError(`Can't parse entities: unexpected "<" at byte offset ${i}`);
      const [all, closing, name] = m;
      const tag = name.toLowerCase();
      if (!TAGS.has(tag))
        throw new HtmlParseError(`Can't parse entities: unsupported start tag "${tag}" at byte offset ${i}`);
      if (closing) {
        if (open.pop() !== tag)
          throw new HtmlParseError(`Can't parse entities: can't find end tag corresponding to start tag "${tag}"`);
      } else open.push(tag);
      i += all.length;
    } else if (ch === '&') {
      const m = ENTITY.exec(html.slice(i));
      if (!m) throw new HtmlParseError(`Can't parse entities: character '&' is reserved at byte offset ${i}`);
      const name = m[1];
      plain +=
        NAMED[name] ??
        String.fromCodePoint(name.startsWith('#x') ? parseInt(name.slice(2), 16) : parseInt(name.slice(1), 10));
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
      `Can't parse entities: can't find end tag corresponding to start tag "${open[open.length - 1]}"`,
    );
  return plain;
}
