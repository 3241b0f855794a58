import fs from 'node:fs';
import path from 'node:path';

/**
 * docs/database.md cannot go stale: every table of serverless.yml has a
 * section naming its keys.ts, its indexes and TTL attribute; every key prefix
 * or constant a keys.ts writes is documented in that section, and every
 * prefix the section names still exists in the code.
 */
const ROOT = path.resolve(__dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface TableDef {
  logicalId: string;
  /** The keys.ts files of the items it holds (a table may hold a shared module's items, e.g. idempotency records). */
  keysFiles: string[];
  indexes: string[];
  ttl?: string;
}

/** The DynamoDB tables of serverless.yml, from its text (the keys.ts is named in a comment of each table). */
function tablesOf(yml: string): TableDef[] {
  const blocks = [...yml.matchAll(/^ {4}(\w+):\n {6}Type: AWS::DynamoDB::Table\n([\s\S]*?)(?=^ {4}\w+:|(?![\s\S]))/gm)];
  return blocks.map(([, logicalId, body]) => ({
    logicalId,
    keysFiles: [...new Set([...body.matchAll(/(lib\/\w+\/keys\.ts)/g)].map((m) => m[1]))],
    indexes: [...body.matchAll(/IndexName: (\w+)/g)].map((m) => m[1]),
    ttl: /TimeToLiveSpecification: \{ AttributeName: (\w+)/.exec(body)?.[1],
  }));
}

/** The literal key parts a keys.ts writes: `PREFIX#${…}` heads and upper-case string constants. */
function keyTokens(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const heads = [...code.matchAll(/`([A-Z][A-Z0-9_]*#)\$\{/g)].map((m) => m[1]);
  const constants = [...code.matchAll(/'([A-Z][A-Z0-9_]*#?)'/g)].map((m) => m[1]);
  return [...new Set([...heads, ...constants])];
}

function section(doc: string, logicalId: string): { heading: string; body: string } | undefined {
  const parts = doc.split(/^(?=## )/m);
  const found = parts.find((p) => p.split('\n')[0].includes(`\`${logicalId}\``));
  return found ? { heading: found.split('\n')[0], body: found } : undefined;
}

describe('docs/database.md', () => {
  const doc = read('docs/database.md');
  const tables = tablesOf(read('serverless.yml'));

  it('finds the tables of serverless.yml', () => {
    expect(tables.map((t) => t.logicalId).sort()).toEqual([
      'DownloadsTable',
      'ScanTable',
      'SyncTable',
      'TelegramTable',
    ]);
  });

  it('documents every lib/*/keys.ts through the table that uses it', () => {
    const keysFiles = fs
      .readdirSync(path.join(ROOT, 'lib'))
      .filter((d) => fs.existsSync(path.join(ROOT, 'lib', d, 'keys.ts')))
      .map((d) => `lib/${d}/keys.ts`);
    expect(tables.flatMap((t) => t.keysFiles).sort()).toEqual(keysFiles.sort());
  });

  describe.each(tablesOf(read('serverless.yml')).map((t) => [t.logicalId, t] as const))('%s', (logicalId, table) => {
    const found = section(doc, logicalId);

    it('has a section that names its keys.ts, its indexes and its TTL attribute', () => {
      for (const keysFile of table.keysFiles) expect(found?.heading).toContain(`\`${keysFile}\``);
      for (const index of table.indexes) expect(found!.body).toContain(`\`${index}\``);
      if (table.ttl) expect(found!.body).toContain(`\`${table.ttl}\``);
    });

    it('documents every key prefix and constant of its keys.ts, and names no prefix the code lost', () => {
      const tokens = table.keysFiles.flatMap((f) => keyTokens(read(f)));
      expect(tokens.length).toBeGreaterThan(0);
      const missing = tokens.filter((t) => !new RegExp(`\`${escape(t)}[\`< ]`).test(found!.body));
      expect(missing).toEqual([]);
      const stale = [...found!.body.matchAll(/`([A-Z][A-Z0-9_]*#)/g)]
        .map((m) => m[1])
        .filter((p) => !tokens.includes(p));
      expect(stale).toEqual([]);
    });
  });
});

describe('the doc check itself', () => {
  it('sees a prefix added to a keys.ts', () => {
    expect(keyTokens("export const fooKey = (id: string) => ({ PK: `FOO#${id}`, SK: 'BAR' }); // 'NOT'")).toEqual([
      'FOO#',
      'BAR',
    ]);
  });
});
