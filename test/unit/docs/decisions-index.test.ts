import fs from 'node:fs';
import path from 'node:path';

/**
 * docs/decisions.md opens with an index by domain. A decision appended without
 * an index entry, listed twice, or an entry for a decision that does not
 * exist fails here; so does an index that names a file the repository lost.
 */
const ROOT = path.resolve(__dirname, '../../..');

export interface IndexProblems {
  unlisted: number[];
  listedTwice: number[];
  unknown: number[];
  missingFiles: string[];
}

export function indexProblems(markdown: string, exists: (file: string) => boolean): IndexProblems {
  const start = markdown.search(/^## Index$/m);
  const firstDecision = markdown.search(/^## \d+\. /m);
  if (start < 0 || firstDecision < start) throw new Error('docs/decisions.md has no "## Index" before its decisions');
  const index = markdown.slice(start, firstDecision);
  const decisions = [...markdown.slice(firstDecision).matchAll(/^## (\d+)\. /gm)].map((m) => Number(m[1]));
  const listed = [...index.matchAll(/^- (\d+)\. /gm)].map((m) => Number(m[1]));
  const count = (n: number) => listed.filter((l) => l === n).length;
  const paths = [
    ...index.matchAll(/`((?:lib|functions|tools|plugins|connector|emulator|bench|test|docs)\/[^`*\s]*)`/g),
  ];
  return {
    unlisted: decisions.filter((n) => count(n) === 0),
    listedTwice: [...new Set(listed.filter((n) => count(n) > 1))],
    unknown: listed.filter((n) => !decisions.includes(n)),
    missingFiles: [...new Set(paths.map((m) => m[1]))].filter((file) => !exists(file) && !exists(`${file}.ts`)),
  };
}

const exists = (file: string) => fs.existsSync(path.join(ROOT, file));
const clean: IndexProblems = { unlisted: [], listedTwice: [], unknown: [], missingFiles: [] };

describe('the index of docs/decisions.md', () => {
  const markdown = fs.readFileSync(path.join(ROOT, 'docs/decisions.md'), 'utf8');

  it('lists every decision exactly once, and only decisions that exist, naming files that exist', () => {
    expect(markdown.match(/^## \d+\. /gm)!.length).toBeGreaterThanOrEqual(127);
    expect(indexProblems(markdown, exists)).toEqual(clean);
  });

  it('reports a decision appended without an entry, an entry listed twice, one for no decision, a lost file', () => {
    const doc = [
      '# Decisions',
      '## Index',
      '### Downloads',
      '- 1. First — `lib/downloads/service.ts`',
      '- 1. First again',
      '- 9. Never written — `lib/gone/away.ts`',
      '## 1. First (2026-12-02)',
      'text mentioning - 2. in a line',
      '## 2. Second (2026-12-02)',
      '## 3. Third, appended later (2026-12-04)',
    ].join('\n');
    expect(indexProblems(doc, exists)).toEqual({
      unlisted: [2, 3],
      listedTwice: [1],
      unknown: [9],
      missingFiles: ['lib/gone/away.ts'],
    });
    expect(() => indexProblems('## 1. No index (2026-12-02)', exists)).toThrow(/no "## Index"/);
  });
});
