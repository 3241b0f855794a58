import fs from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * The import graph of the repository and the layering rules of
 * docs/architecture.md over it. Used by test/unit/architecture and by
 * `npm run arch` (which prints the graph's violations and figures).
 */

/** lib/ modules that hold a domain: model, errors, keys, store, service. */
export const DOMAINS = ['downloads', 'torrents', 'scan', 'sync', 'web', 'telegram'] as const;
/** lib/ modules that know no domain. */
export const SHARED = [
  'auth',
  'aws',
  'clock',
  'config',
  'errors',
  'health',
  'http',
  'i18n',
  'ident',
  'idempotency',
  'lambda',
  'log',
  'metrics',
  'names',
  'nats',
  'secrets',
  'util',
] as const;

const SCANNED = ['lib', 'functions', 'tools', 'emulator', 'plugins', 'bench', 'test'];
const TOOLING = ['tools/', 'emulator/', 'plugins/', 'bench/', 'test/'];

export interface ImportGraph {
  root: string;
  /** Repository-relative paths of every scanned source file. */
  files: string[];
  /** File → what it imports: repository-relative paths, or bare package specifiers. */
  imports: Map<string, string[]>;
}

export interface Violation {
  rule:
    | 'domain-internals'
    | 'sdk-in-domain'
    | 'runtime-imports-tooling'
    | 'shared-imports-domain'
    | 'handler-imports-storage'
    | 'decision-imports-io'
    | 'handler-imports-other-folder'
    | 'cycle';
  from: string;
  to: string;
}

export function loadImportGraph(root = path.resolve(__dirname, '..', '..')): ImportGraph {
  const files: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(path.join(root, dir), { withFileTypes: true })) {
      const rel = path.posix.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (entry.name !== 'node_modules' && !entry.name.startsWith('.')) walk(rel);
      } else if (/\.(ts|js|mjs|cjs)$/.test(entry.name) && !entry.name.endsWith('.d.ts')) files.push(rel);
    }
  };
  for (const dir of SCANNED) if (fs.existsSync(path.join(root, dir))) walk(dir);

  const imports = new Map<string, string[]>();
  for (const file of files) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const info = ts.preProcessFile(text, true, true);
    imports.set(
      file,
      info.importedFiles.map((ref) => resolve(root, file, ref.fileName)),
    );
  }
  return { root, files, imports };
}

function resolve(root: string, from: string, spec: string): string {
  if (!spec.startsWith('.')) return spec;
  const base = path.posix.normalize(path.posix.join(path.posix.dirname(from), spec));
  for (const candidate of [`${base}.ts`, `${base}/index.ts`, `${base}.js`, `${base}/index.js`, base]) {
    if (fs.existsSync(path.join(root, candidate)) && fs.statSync(path.join(root, candidate)).isFile()) return candidate;
  }
  return base;
}

/** `functions/<folder>/…` → folder. */
function handlerFolder(file: string): string | undefined {
  return /^functions\/([^/]+)\//.exec(file)?.[1];
}

/** `lib/<module>/…` → module; a file directly under lib/ is shared. */
function libModule(file: string): string | undefined {
  const m = /^lib\/([^/]+)\//.exec(file);
  return m ? m[1] : file.startsWith('lib/') ? '(root)' : undefined;
}
const isDomain = (module: string | undefined): boolean => (DOMAINS as readonly string[]).includes(module ?? '');
const isStorageInternal = (file: string) => /\/(keys|dynamodb[^/]*)\.ts$/.test(file);
/** A domain's storage modules: its keys, its store interfaces (`store.ts`, `*-store.ts`) and its DynamoDB stores. */
const isStorage = (file: string) => /\/(keys|store|[^/]*-store|dynamodb[^/]*)\.ts$/.test(file);
/** Adapters that may talk to AWS inside a domain: its DynamoDB store, its change stream and S3 access. */
const mayUseSdk = (file: string) => /\/(dynamodb[^/]*|[^/]*-store|[^/]*-stream|s3[^/]*)\.ts$/.test(file);
/**
 * A domain's decision modules: its model (types and pure transitions), the
 * downloads guards' plans, the sync outcome. Pure by rule: they take the rows
 * read and return what to write, so they import no AWS client, no shared AWS
 * helper and no store.
 */
const isDecision = (file: string) => /^lib\/[^/]+\/(model|guards|outcome)\.ts$/.test(file);
const isIo = (to: string) =>
  to.startsWith('@aws-sdk/') || to.startsWith('lib/aws/') || /\/(dynamodb[^/]*|[^/]*-store|store)\.ts$/.test(to);

export function analyseImports(graph: ImportGraph): { violations: Violation[]; unclassified: string[] } {
  const violations: Violation[] = [];
  const add = (rule: Violation['rule'], from: string, to: string) => violations.push({ rule, from, to });

  for (const [from, targets] of graph.imports) {
    const fromModule = libModule(from);
    for (const to of targets) {
      const toModule = libModule(to);
      const runtime = from.startsWith('lib/') || from.startsWith('functions/');
      if (runtime && TOOLING.some((prefix) => to.startsWith(prefix))) add('runtime-imports-tooling', from, to);
      if (isDomain(fromModule) && isDomain(toModule) && fromModule !== toModule && isStorageInternal(to)) {
        add('domain-internals', from, to);
      }
      if (isDomain(fromModule) && to.startsWith('@aws-sdk/') && !mayUseSdk(from)) add('sdk-in-domain', from, to);
      if (fromModule && !isDomain(fromModule) && isDomain(toModule)) add('shared-imports-domain', from, to);
      // Handlers call services: a domain's keys, store interfaces and DynamoDB stores are wired in deps.ts only.
      if (from.startsWith('functions/') && !from.endsWith('/deps.ts') && isDomain(toModule) && isStorage(to)) {
        add('handler-imports-storage', from, to);
      }
      if (from.startsWith('functions/') && /\/keys\.ts$/.test(to)) add('handler-imports-storage', from, to);
      if (isDomain(fromModule) && isDecision(from) && isIo(to)) add('decision-imports-io', from, to);
      // A handler folder is one deployable surface: what two folders share lives in lib/ (a domain's wiring.ts).
      const fromFolder = handlerFolder(from);
      const toFolder = handlerFolder(to);
      if (fromFolder && toFolder && fromFolder !== toFolder) add('handler-imports-other-folder', from, to);
    }
  }

  for (const cycle of fileCycles(graph)) add('cycle', cycle[0], cycle.join(' → '));
  for (const cycle of moduleCycles(graph)) add('cycle', `lib/${cycle[0]}`, cycle.map((m) => `lib/${m}`).join(' → '));

  const modules = new Set(graph.files.map(libModule).filter((m): m is string => m !== undefined && m !== '(root)'));
  const unclassified = [...modules].filter((m) => !isDomain(m) && !(SHARED as readonly string[]).includes(m)).sort();
  return { violations, unclassified };
}

/** Strongly connected components of more than one file (Tarjan), over repository files only. */
function fileCycles(graph: ImportGraph): string[][] {
  const known = new Set(graph.files);
  const edges = (f: string) => (graph.imports.get(f) ?? []).filter((t) => known.has(t));
  return stronglyConnected(graph.files, edges);
}

/** Cycles between lib/ modules (lib/a → lib/b → lib/a), the coarser rule. */
function moduleCycles(graph: ImportGraph): string[][] {
  const out = new Map<string, Set<string>>();
  for (const [from, targets] of graph.imports) {
    const a = libModule(from);
    if (!a || a === '(root)') continue;
    for (const to of targets) {
      const b = libModule(to);
      if (b && b !== '(root)' && b !== a) (out.get(a) ?? out.set(a, new Set()).get(a)!).add(b);
    }
  }
  const nodes = [...new Set([...out.keys(), ...[...out.values()].flatMap((s) => [...s])])];
  return stronglyConnected(nodes, (n) => [...(out.get(n) ?? [])]);
}

function stronglyConnected(nodes: string[], edges: (n: string) => string[]): string[][] {
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const result: string[][] = [];
  const visit = (v: string) => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges(v)) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const component: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        onStack.delete(w);
        component.push(w);
      } while (w !== v);
      if (component.length > 1) result.push(component.reverse());
    }
  };
  for (const n of nodes) if (!index.has(n)) visit(n);
  return result;
}

if (require.main === module) {
  const graph = loadImportGraph();
  const { violations, unclassified } = analyseImports(graph);
  const lines = graph.files.reduce(
    (n, f) => n + fs.readFileSync(path.join(graph.root, f), 'utf8').split('\n').length,
    0,
  );
  process.stdout.write(`${graph.files.length} files, ${lines} lines, ${violations.length} violations\n`);
  for (const v of violations) process.stdout.write(`  ${v.rule.padEnd(24)} ${v.from} → ${v.to}\n`);
  if (unclassified.length) process.stdout.write(`  unclassified lib/ modules: ${unclassified.join(', ')}\n`);
  process.exitCode = violations.length || unclassified.length ? 1 : 0;
}
