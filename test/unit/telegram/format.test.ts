import fc from 'fast-check';
import { htmlToPlain } from '../../../emulator/telegram/html';
import { newId } from '../../../lib/ident';
import {
  botLocale,
  escapeHtml,
  fitLines,
  MAX_MESSAGE_CHARS,
  notificationText,
  visibleLength,
} from '../../../lib/telegram/format';
import { EN } from '../../../lib/telegram/messages-en';

const en = botLocale('en', 'UTC');
import { EVENT_KINDS } from '../../../lib/telegram/model';

describe('notification text', () => {
  const id = newId();

  it('links failures to the review page and plain changes to the card', () => {
    const d = { id, name: 'Sintel', state: 'failed' as const, firstHash: 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a' };
    const failed = notificationText('failed', d, 'https://ui.example/app', en);
    expect(failed).toContain(`href="https://ui.example/app/review/${id}"`);
    expect(failed).toContain('c12fe1c06bba254a9dc9f519b335aa7c1367a88a');
    expect(notificationText('completed', { ...d, state: 'completed' }, 'https://ui.example/', en)).toContain(
      `href="https://ui.example/download/${id}"`,
    );
  });

  it('escapes any name so Telegram parses the message and shows the name verbatim', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), fc.constantFrom(...EVENT_KINDS), (name, kind) => {
        const html = notificationText(kind, { id, name, state: 'failed' }, 'http://127.0.0.1:3000', en);
        expect(htmlToPlain(html)).toContain(name.length > 200 ? name.slice(0, 199) : name);
      }),
    );
  });

  it('is what the emulator refuses without escaping', () => {
    expect(() => htmlToPlain('<b>x</b> <script>alert(1)</script>')).toThrow(/unsupported start tag "script"/);
    expect(() => htmlToPlain('a & b')).toThrow(/reserved/);
    expect(htmlToPlain(escapeHtml('<script>a & b</script>'))).toBe('<script>a & b</script>');
  });
});

describe("Telegram's 4,096 characters", () => {
  const id = newId();

  it('keeps lines that fit as they are', () => {
    expect(fitLines(['<b>a</b>', 'b'], EN)).toBe('<b>a</b>\nb');
  });

  it('counts what Telegram counts: the text after the HTML is parsed', () => {
    const html = `<a href="https://x/${'y'.repeat(500)}">${escapeHtml('<&>')}</a>`;
    expect(visibleLength(html)).toBe(htmlToPlain(html).length);
  });

  it('drops whole lines from the end with a visible mark, and stays parseable', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 1, maxLength: 400 }), { minLength: 1, maxLength: 40 }), (names) => {
        const lines = names.map((n) => `<code>${id}</code> <a href="https://ui/x">${escapeHtml(n)}</a>`);
        const html = fitLines(lines, EN);
        const plain = htmlToPlain(html);
        expect(plain.length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
        if (visibleLength(lines.join('\n')) > MAX_MESSAGE_CHARS) expect(plain).toMatch(/… shortened: \d+ more line/);
        else expect(html).toBe(lines.join('\n'));
      }),
      { numRuns: 60 },
    );
  });

  it('shortens a 5,000-character answer with the mark', () => {
    const lines = Array.from({ length: 10 }, (_, i) => `<code>${i}</code> ${'n'.repeat(500)}`);
    const html = fitLines(lines, EN);
    expect(htmlToPlain(html).length).toBeLessThanOrEqual(MAX_MESSAGE_CHARS);
    expect(htmlToPlain(html)).toMatch(/… shortened: [23] more lines not shown/);
  });

  it('keeps a notification with a huge name and review reason under the limit', () => {
    const d = { id, name: 'x'.repeat(5000), state: 'failed' as const, reviewReason: '<'.repeat(5000) };
    const text = htmlToPlain(notificationText('needs_review', d, 'https://ui', en));
    expect(text.length).toBeLessThan(MAX_MESSAGE_CHARS);
    expect(text).toContain('…');
  });
});
