import { parseHtml } from '../../../emulator/telegram/html';

/**
 * The entities Telegram derives from parse_mode HTML (Bot API "HTML style";
 * @grammyjs/types message.d.ts `MessageEntity`): offsets and lengths in
 * UTF-16 code units, outer before inner at one offset, empty ones dropped.
 */
describe('HTML tags become the entities Telegram returns', () => {
  it('counts in UTF-16 code units: an emoji is two', () => {
    expect(parseHtml('😀 <b>ok</b>')).toEqual({ text: '😀 ok', entities: [{ type: 'bold', offset: 3, length: 2 }] });
  });

  it('nests outer first, and drops an empty tag', () => {
    expect(parseHtml('<b>a <i>b</i></b><u></u>').entities).toEqual([
      { type: 'bold', offset: 0, length: 3 },
      { type: 'italic', offset: 2, length: 1 },
    ]);
  });

  it('names a link, a pre block with its language, a spoiler, quotes and a custom emoji', () => {
    const html =
      '<a href="https://x.example/?a=1&amp;b=2">l</a><pre><code class="language-ts">c</code></pre>' +
      '<span class="tg-spoiler">s</span><tg-spoiler>t</tg-spoiler><blockquote>q</blockquote>' +
      '<blockquote expandable>e</blockquote><tg-emoji emoji-id="5368324170671202286">👍</tg-emoji><s>x</s>';
    expect(parseHtml(html).entities).toEqual([
      { type: 'text_link', offset: 0, length: 1, url: 'https://x.example/?a=1&b=2' },
      { type: 'pre', offset: 1, length: 1, language: 'ts' },
      { type: 'spoiler', offset: 2, length: 1 },
      { type: 'spoiler', offset: 3, length: 1 },
      { type: 'blockquote', offset: 4, length: 1 },
      { type: 'expandable_blockquote', offset: 5, length: 1 },
      { type: 'custom_emoji', offset: 6, length: 2, custom_emoji_id: '5368324170671202286' },
      { type: 'strikethrough', offset: 8, length: 1 },
    ]);
  });
});
