import fc from 'fast-check';
import { htmlToPlain } from '../../../emulator/telegram/html';
import { newId } from '../../../lib/ident';
import { escapeHtml, notificationText } from '../../../lib/telegram/format';
import { EVENT_KINDS } from '../../../lib/telegram/model';

describe('notification text', () => {
  const id = newId();

  it('links failures to the review page and plain changes to the card', () => {
    const d = { id, name: 'Sintel', state: 'failed' as const, firstHash: 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a' };
    const failed = notificationText('failed', d, 'https://ui.example/app');
    expect(failed).toContain(`href="https://ui.example/app/review/${id}"`);
    expect(failed).toContain('c12fe1c06bba254a9dc9f519b335aa7c1367a88a');
    expect(notificationText('completed', { ...d, state: 'completed' }, 'https://ui.example/')).toContain(
      `href="https://ui.example/download/${id}"`,
    );
  });

  it('escapes any name so Telegram parses the message and shows the name verbatim', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 120 }), fc.constantFrom(...EVENT_KINDS), (name, kind) => {
        const html = notificationText(kind, { id, name, state: 'failed' }, 'http://127.0.0.1:3000');
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
