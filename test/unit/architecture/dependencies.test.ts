import fs from 'node:fs';
import path from 'node:path';

/**
 * package.json's `dependencies` are exactly what deployed code imports (lib/,
 * functions/, connector/) and what the operator CLIs (tools/cli/ and the
 * runbooks' tools/ops/, run from a production install: `npm ci --omit=dev`,
 * then e.g. `npm run import:legacy`)
 * import, with their runner (tsx): tooling there would be installed with every
 * production install, and a deployed import of a devDependency would fail
 * only at deploy time. Each one has its line in docs/architecture.md; the
 * AWS SDK clients share one exact release and the lock holds one copy of
 * every `@aws-sdk/*` and `@smithy/*` package, so no bundle carries two.
 */
const ROOT = path.resolve(__dirname, '../../..');
const read = (file: string) => fs.readFileSync(path.join(ROOT, file), 'utf8');

interface Manifest {
  dependencies: Record<string, string>;
  devDependencies: Record<string, string>;
  scripts?: Record<string, string>;
}
interface Lock {
  packages: Record<string, { version: string }>;
}

/** The npm packages a source file imports (node: built-ins and relative paths are not packages). */
export function importedPackages(source: string): string[] {
  const specifiers = [
    ...source.matchAll(
      /\bfrom\s+'([^']+)'|\bimport\s*\(\s*'([^']+)'\s*\)|\brequire\(\s*'([^']+)'\s*\)|^import\s+'([^']+)'/gm,
    ),
  ].map((m) => m[1] ?? m[2] ?? m[3] ?? m[4]);
  const packages = specifiers
    .filter((s) => !s.startsWith('.') && !s.startsWith('node:'))
    .map((s) =>
      s
        .split('/')
        .slice(0, s.startsWith('@') ? 2 : 1)
        .join('/'),
    );
  return [...new Set(packages)];
}

export function dependencyProblems(imported: Map<string, string>, manifest: Manifest, documented: string): string[] {
  const problems: string[] = [];
  for (const [name, file] of imported) {
    if (name in manifest.dependencies) continue;
    // A types-only package: its runtime name is installed nowhere, so it can only be erased at build.
    const typesOnly = `@types/${name}` in manifest.devDependencies && !(name in manifest.devDependencies);
    if (!typesOnly) problems.push(`${name} is imported by ${file} but is not in dependencies`);
  }
  for (const [name, version] of Object.entries(manifest.dependencies)) {
    if (!imported.has(name)) problems.push(`${name} is in dependencies but no deployed code imports it`);
    if (!/^\d+\.\d+\.\d+$/.test(version)) problems.push(`${name}@${version} is not pinned exactly`);
    if (!documented.includes(`| \`${name}\` |`)) problems.push(`${name} has no line in docs/architecture.md`);
  }
  const sdk = Object.entries(manifest.dependencies).filter(([n]) => /^@aws-sdk\/(client-|lib-)/.test(n));
  if (new Set(sdk.map(([, v]) => v)).size > 1)
    problems.push(`the AWS SDK clients differ: ${sdk.map((e) => e.join('@'))}`);
  return problems;
}

/** Packages of the SDK's core the lock holds more than one copy of. */
export function duplicatedSdkPackages(lock: Lock): string[] {
  const copies = new Map<string, Set<string>>();
  for (const [where, entry] of Object.entries(lock.packages)) {
    const name = where.split('node_modules/').pop()!;
    if (!/^@(aws-sdk|smithy)\//.test(name)) continue;
    copies.set(name, (copies.get(name) ?? new Set()).add(entry.version));
  }
  return [...copies].filter(([, versions]) => versions.size > 1).map(([name, v]) => `${name}: ${[...v].join(', ')}`);
}

function deployedSources(): string[] {
  return ['lib', 'functions', 'connector', 'tools/cli', 'tools/ops'].flatMap((dir) =>
    fs
      .readdirSync(path.join(ROOT, dir), { withFileTypes: true, recursive: true })
      .filter((e) => e.isFile() && e.name.endsWith('.ts'))
      .map((e) => path.relative(ROOT, path.join(e.parentPath, e.name))),
  );
}

describe('runtime dependencies', () => {
  const manifest: Manifest = JSON.parse(read('package.json'));
  const imported = new Map<string, string>();
  for (const file of deployedSources()) for (const name of importedPackages(read(file))) imported.set(name, file);
  // The program an operator CLI's script runs it with (`tsx tools/cli/x.ts`) is a runtime dependency too.
  for (const [script, line] of Object.entries(manifest.scripts ?? {}))
    if (/^\S+ tools\/(cli|ops)\//.test(line)) imported.set(line.split(' ')[0], `package.json scripts.${script}`);
  const architecture = read('docs/architecture.md');

  it('are exactly what deployed code imports, pinned, documented, the SDK clients on one release', () => {
    expect(imported.size).toBeGreaterThan(8);
    expect(dependencyProblems(imported, manifest, architecture)).toEqual([]);
  });

  it('the lock holds one copy of every @aws-sdk and @smithy package', () => {
    expect(duplicatedSdkPackages(JSON.parse(read('package-lock.json')))).toEqual([]);
  });

  it('reports tooling in dependencies, a deployed import of a devDependency, a range, an undocumented or split SDK', () => {
    const broken: Manifest = {
      dependencies: { ...manifest.dependencies, eslint: manifest.devDependencies.eslint, ulid: '^3.0.2' },
      devDependencies: { ...manifest.devDependencies, ajv: manifest.dependencies.ajv },
    };
    delete broken.dependencies.ajv;
    broken.dependencies['@aws-sdk/client-s3'] = '3.1175.0';
    const problems = dependencyProblems(imported, broken, architecture.replace('| `ulid` |', '| ulid |'));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^ajv is imported by .* but is not in dependencies$/),
        'eslint is in dependencies but no deployed code imports it',
        'eslint has no line in docs/architecture.md',
        'ulid@^3.0.2 is not pinned exactly',
        'ulid has no line in docs/architecture.md',
        expect.stringMatching(/^the AWS SDK clients differ/),
      ]),
    );
    expect(problems).toHaveLength(6);
  });

  it('reads every import form and a second copy of the SDK core in the lock', () => {
    const source = [
      "import { a } from '@aws-sdk/client-s3';",
      "import type { B } from 'aws-lambda';",
      "import 'side-effect';",
      "const c = await import('@aws-sdk/lib-dynamodb');",
      "const d = require('nats/lib/x');",
      "import e from 'node:fs'; import f from './local';",
    ].join('\n');
    expect(importedPackages(source).sort()).toEqual(
      ['@aws-sdk/client-s3', '@aws-sdk/lib-dynamodb', 'aws-lambda', 'nats', 'side-effect'].sort(),
    );
    const lock: Lock = {
      packages: {
        'node_modules/@aws-sdk/core': { version: '3.981.2' },
        'node_modules/@aws-sdk/client-lambda/node_modules/@aws-sdk/core': { version: '3.970.0' },
        'node_modules/@smithy/types': { version: '4.20.0' },
      },
    };
    expect(duplicatedSdkPackages(lock)).toEqual(['@aws-sdk/core: 3.981.2, 3.970.0']);
  });
});
