import fs from 'node:fs';
import path from 'node:path';

/**
 * The reference in docs/ cannot fall behind the code: every setting the code
 * reads (lib/config's reader, `process.env` and `env.X` reads in lib/,
 * functions/, connector/, tools/stack/, tools/cli/, tools/ops/ and plugins/; the emulators'
 * own knobs are test fixtures) is named in README.md or a docs/*.md page, and
 * every HTTP route of serverless.yml is documented there as `METHOD /path`.
 */
const ROOT = path.resolve(__dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Read by the platform, not settings of ours: never documented here. */
const PLATFORM = new Set(['PATH']);

/** The environment variables a source file reads (assignments such as `env.X = …` are not reads). */
export function settingsRead(source: string): string[] {
  const code = source.replace(/\/\*[\s\S]*?\*\//g, '').replace(/\/\/.*$/gm, '');
  const patterns = [
    // lib/config's EnvReader: r.string('NAME'), r.int('NAME'), r.has('NAME') …
    /\b\w+\.(?:string|int|seconds|url|urlList|has|bool|boolean|list)\(\s*'([A-Z][A-Z0-9_]+)'/g,
    /\bprocess\.env\.([A-Z][A-Z0-9_]+)\b(?!\s*(?:\?\?)?=(?!=))/g,
    /\bprocess\.env\[\s*['"]([A-Z][A-Z0-9_]+)['"]\s*\](?!\s*(?:\?\?)?=(?!=))/g,
    /\benv\.([A-Z][A-Z0-9_]+)\b(?!\s*(?:\?\?)?=(?!=))/g,
    /\benv\[\s*['"]([A-Z][A-Z0-9_]+)['"]\s*\](?!\s*(?:\?\?)?=(?!=))/g,
    // Names read in a group by lib/config (e.g. SMB_VARIABLES = ['SCAN_SMB_SHARE', …]).
    /\b[A-Z_]*VARIABLES\s*=\s*\[([^\]]*)\]/g,
  ];
  const names = new Set<string>();
  for (const pattern of patterns) {
    for (const match of code.matchAll(pattern)) {
      for (const name of match[1].match(/[A-Z][A-Z0-9_]+/g) ?? []) names.add(name);
    }
  }
  return [...names].filter((name) => !PLATFORM.has(name)).sort();
}

export interface Route {
  method: string;
  path: string;
}

/** The `httpApi` routes of serverless.yml (one-line flow form; anything else is refused, not skipped). */
export function httpRoutes(yml: string): Route[] {
  const lines = yml.split('\n').filter((line) => /^\s*- httpApi\b/.test(line));
  return lines.map((line) => {
    const match = /httpApi: \{ method: ([A-Z]+), path: (?:'([^']+)'|([^\s',}]+))\s*[,}]/.exec(line);
    if (!match) throw new Error(`an httpApi event this check cannot read: ${line.trim()}`);
    return { method: match[1], path: match[2] ?? match[3] };
  });
}

/** Whether `METHOD /path` is written in the docs, not only a longer path that starts with it. */
export function routeDocumented(route: Route, docs: string): boolean {
  return new RegExp(`\\b${route.method} ${escape(route.path)}(?![\\w/{}-])`).test(docs);
}

export function settingDocumented(name: string, docs: string): boolean {
  return new RegExp(`(?<![A-Z0-9_])${name}(?![A-Z0-9_])`).test(docs);
}

function sourceFiles(dir: string): string[] {
  return fs
    .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && /\.(ts|js|mjs|cjs)$/.test(entry.name))
    .map((entry) => path.relative(ROOT, path.join(entry.parentPath, entry.name)));
}

function docsText(): string {
  const pages = fs
    .readdirSync(path.join(ROOT, 'docs'), { recursive: true })
    .map(String)
    .filter((file) => file.endsWith('.md'))
    .map((file) => read(path.join('docs', file)));
  return [read('README.md'), ...pages].join('\n');
}

describe('the reference in docs/', () => {
  const docs = docsText();
  // What ships or runs the service: handlers and their library, the connector, the stack, the CLIs, the plugins.
  const files = ['lib', 'functions', 'connector', 'tools/stack', 'tools/cli', 'tools/ops', 'plugins'].flatMap(
    sourceFiles,
  );
  const read_ = new Map<string, string[]>();
  for (const file of files)
    for (const name of settingsRead(read(file))) read_.set(name, [...(read_.get(name) ?? []), file]);

  it('finds the settings the code reads (a broken extractor would pass every check)', () => {
    expect(read_.size).toBeGreaterThan(60);
    for (const name of ['AWS_REGION', 'TORRENT_CLIENT_URL', 'SCAN_SMB_SHARE', 'TBANK_API_URL', 'STACK_DATA_DIR']) {
      expect([...read_.keys()]).toContain(name);
    }
  });

  it('names every setting the code reads', () => {
    const missing = [...read_].filter(([name]) => !settingDocumented(name, docs)).map(([n, f]) => `${n} (${f[0]})`);
    expect(missing).toEqual([]);
  });

  it('documents every HTTP route of serverless.yml as METHOD /path', () => {
    const routes = httpRoutes(read('serverless.yml'));
    expect(routes.length).toBe(read('serverless.yml').match(/- httpApi\b/g)!.length);
    expect(routes.length).toBeGreaterThan(20);
    const missing = routes.filter((route) => !routeDocumented(route, docs)).map((r) => `${r.method} ${r.path}`);
    expect(missing).toEqual([]);
  });

  it('a setting read any of these ways is found; an assignment, a comment or a platform variable is not', () => {
    const source = [
      "const a = r.int('ALPHA_SECONDS', { default: 1, min: 0, max: 9 });",
      'const b = process.env.BRAVO_URL ?? "x";',
      "const c = process.env['CHARLIE_KEY'];",
      'if (env.DELTA_ON === "true") run();',
      "const group = ['ECHO_ONE', 'ECHO_TWO']; const SMB_VARIABLES = ['FOXTROT_SHARE', 'FOXTROT_USER'];",
      'env.GOLF_WRITTEN = "1"; process.env.HOTEL_WRITTEN ??= "1";',
      '// process.env.INDIA_IN_A_COMMENT',
      'const p = process.env.PATH;',
    ].join('\n');
    expect(settingsRead(source)).toEqual([
      'ALPHA_SECONDS',
      'BRAVO_URL',
      'CHARLIE_KEY',
      'DELTA_ON',
      'FOXTROT_SHARE',
      'FOXTROT_USER',
    ]);
  });

  it('an undocumented setting or route is reported; a longer path or a longer name does not count', () => {
    const page = 'Set `TORRENT_CLIENT_URL_EXTRA`. `GET /downloads/{id}` answers; `POST /downloads?x=1` too.';
    expect(settingDocumented('TORRENT_CLIENT_URL', page)).toBe(false);
    expect(settingDocumented('TORRENT_CLIENT_URL_EXTRA', page)).toBe(true);
    expect(routeDocumented({ method: 'GET', path: '/downloads' }, page)).toBe(false);
    expect(routeDocumented({ method: 'GET', path: '/downloads/{id}' }, page)).toBe(true);
    expect(routeDocumented({ method: 'POST', path: '/downloads' }, page)).toBe(true);
    expect(routeDocumented({ method: 'DELETE', path: '/downloads/{id}' }, page)).toBe(false);
  });

  it('a route written in a form it cannot read fails the check instead of being skipped', () => {
    expect(() => httpRoutes('      - httpApi:\n          method: GET\n')).toThrow(/cannot read/);
    expect(httpRoutes("      - httpApi: { method: GET, path: '/a/{id}', authorizer: { name: bearer } }")).toEqual([
      { method: 'GET', path: '/a/{id}' },
    ]);
  });
});
