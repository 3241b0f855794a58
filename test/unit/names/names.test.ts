import fc from 'fast-check';
import {
  inboxName,
  InvalidFileNameError,
  InvalidObjectKeyError,
  MAX_INBOX_NAME_BYTES,
  validateName,
  validateObjectKey,
} from '../../../lib/names';

const JOB = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

describe('validateName', () => {
  it.each([
    ['empty', ''],
    ['traversal', '../../etc/passwd'],
    ['a parent dir', '..'],
    ['absolute', '/etc/passwd'],
    ['windows separator', 'a\\b.pdf'],
    ['NUL', 'a\0.pdf'],
    ['dot-file', '.hidden.pdf'],
    ['a drive', 'C:evil.pdf'],
    ['a control character', 'a\u0001b.pdf'],
    ['a newline', 'a\nb.pdf'],
    ['a Windows device', 'CON'],
    ['a Windows device with an extension', 'nul.txt'],
    ['a Windows device, any case, trailing dot', 'Com1.'],
    ['a Windows device with two extensions', 'LPT9.tar.gz'],
    ['a console device', 'CONOUT$.txt'],
    ['not a string', 42],
  ])('refuses %s', (_what, name) => {
    expect(() => validateName(name)).toThrow(InvalidFileNameError);
  });

  it('accepts ordinary names, unicode included, and names that merely start like a device', () => {
    for (const name of [
      'aep_3.pdf',
      'Счёт №5.PDF',
      'scan (1).tiff',
      'console.pdf',
      'COM10.pdf',
      'nul_report.pdf',
      'a..b.pdf',
    ])
      expect(validateName(name)).toBe(name);
  });
});

describe('validateObjectKey', () => {
  it.each([
    ['empty', ''],
    ['absolute', '/inbox/a.pdf'],
    ['traversal', 'inbox/../../etc/passwd'],
    ['a leading parent', '../a.pdf'],
    ['a dot segment', 'inbox/./a.pdf'],
    ['an empty segment', 'inbox//a.pdf'],
    ['a trailing slash', 'inbox/'],
    ['NUL', 'inbox/a\0.pdf'],
    ['a backslash', 'inbox\\..\\a.pdf'],
    ['oversize', 'a/'.repeat(600) + 'b'],
    ['not a string', { key: 'a' }],
  ])('refuses %s', (_what, key) => {
    expect(() => validateObjectKey(key)).toThrow(InvalidObjectKeyError);
  });

  it('accepts ordinary keys', () => {
    for (const key of ['inbox/3f2504e0/aep_3.pdf', 'a.pdf', 'raw/x..y.json', 'inbox/Счёт №5.PDF'])
      expect(validateObjectKey(key)).toBe(key);
  });
});

describe('inboxName', () => {
  it('prefixes the job id and replaces characters a share refuses', () => {
    expect(inboxName(JOB, 'ab:c|d.pdf')).toBe(`${JOB}_ab_c_d.pdf`);
    expect(inboxName(JOB, 'report. . ')).toBe(`${JOB}_report`);
  });

  it('rewrites rather than refuses (rule 29): wildcards, control characters, lone surrogates, device names', () => {
    expect(inboxName(JOB, 'Что это?.pdf')).toBe(`${JOB}_Что это_.pdf`);
    expect(inboxName(JOB, 'Отчёт: 2024.pdf')).toBe(`${JOB}_Отчёт_ 2024.pdf`);
    expect(inboxName(JOB, 'a*b<c>"d"|e.pdf')).toBe(`${JOB}_a_b_c__d__e.pdf`);
    expect(inboxName(JOB, 'tab\there\u007f\u001f.pdf')).toBe(`${JOB}_tab_here__.pdf`);
    expect(inboxName(JOB, 'half\uD800.pdf')).toBe(`${JOB}_half_.pdf`);
    expect(inboxName(JOB, 'CON.pdf')).toBe(`${JOB}_CON.pdf`);
    expect(inboxName(JOB, 'C:scan.pdf')).toBe(`${JOB}_C_scan.pdf`);
    expect(inboxName(JOB, 'name?. . .')).toBe(`${JOB}_name_`);
  });

  it('refuses only a name that would say where it goes: empty, a path separator', () => {
    for (const bad of ['', 'a/b.pdf', 'a\\b.pdf', '../x.pdf', '/etc/passwd', '..\\x.pdf'])
      expect(() => inboxName(JOB, bad)).toThrow(InvalidFileNameError);
  });

  it('rewrites a leading dot and NUL like any other name the share could not show (rule 29, decision 369)', () => {
    expect(inboxName(JOB, '.Отчёт.pdf')).toBe(`${JOB}__Отчёт.pdf`);
    expect(inboxName(JOB, '..x.pdf')).toBe(`${JOB}___x.pdf`);
    expect(inboxName(JOB, 'a\0b.pdf')).toBe(`${JOB}_a_b.pdf`);
    expect(inboxName(JOB, '..')).toBe(`${JOB}___`);
    expect(inboxName(JOB, '.')).toBe(`${JOB}__`);
    // Never a hidden file, never a name of its own: the job id always leads.
    for (const name of ['.hidden', '...', '.\0.pdf']) expect(inboxName(JOB, name).startsWith(`${JOB}_`)).toBe(true);
  });

  it('always fits 240 bytes, keeps the extension, never splits a character', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, maxLength: 400, unit: 'grapheme' }),
        fc.constantFrom('.pdf', '.tiff', ''),
        (stem, ext) => {
          let name: string;
          try {
            name = stem.replace(/[/\\\0]/g, 'x').replace(/^\.+/, 'x') + ext;
          } catch {
            return; // over the input bound: refused before naming
          }
          const inbox = inboxName(JOB, name);
          expect(Buffer.byteLength(inbox, 'utf8')).toBeLessThanOrEqual(MAX_INBOX_NAME_BYTES);
          expect(inbox.startsWith(`${JOB}_`)).toBe(true);
          expect(inbox).not.toMatch(/[:<>"|?*\u0000-\u001f/\\]|[. ]$/);
          expect(Buffer.from(inbox, 'utf8').toString('utf8')).toBe(inbox);
          if (ext && Buffer.byteLength(`${JOB}_${name}`, 'utf8') > MAX_INBOX_NAME_BYTES)
            expect(inbox.endsWith(ext)).toBe(true);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('fits a smaller budget (room for a temp suffix), cutting by code points', () => {
    const inbox = inboxName(JOB, `${'😀'.repeat(100)}.pdf`, 222);
    expect(Buffer.byteLength(inbox, 'utf8')).toBeLessThanOrEqual(222);
    expect(inbox).toMatch(new RegExp(`^${JOB}_(😀)+\\.pdf$`, 'u'));
  });

  it('keeps an extension of at most 16 characters; a longer one is cut like the rest', () => {
    const long = `${'a'.repeat(300)}.${'e'.repeat(16)}`;
    expect(inboxName(JOB, long).endsWith(`.${'e'.repeat(16)}`)).toBe(true);
    const tooLong = `${'a'.repeat(300)}.${'e'.repeat(17)}`;
    const cut = inboxName(JOB, tooLong);
    expect(Buffer.byteLength(cut, 'utf8')).toBeLessThanOrEqual(MAX_INBOX_NAME_BYTES);
    expect(cut).toBe(`${JOB}_${'a'.repeat(MAX_INBOX_NAME_BYTES - JOB.length - 1)}`);
    expect(() => inboxName(JOB, `a.${'e'.repeat(300)}`)).not.toThrow(); // never "extension too long"
  });
});
