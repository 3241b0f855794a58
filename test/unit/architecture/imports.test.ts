import { analyseImports, loadImportGraph, type Violation } from '../../../tools/arch/imports';

/**
 * The layering rule of docs/architecture.md, checked on the real import graph
 * of the repository. A failure names the importing file and the import.
 */
describe('architecture: the import graph', () => {
  const graph = loadImportGraph();
  const report = analyseImports(graph);

  it('reads the whole tree', () => {
    expect(graph.files.length).toBeGreaterThan(100);
  });

  it('classifies every lib/ module as a domain or a shared module', () => {
    expect(report.unclassified).toEqual([]);
  });

  it('has no domain importing another domain’s storage internals', () => {
    expect(report.violations.filter((v) => v.rule === 'domain-internals')).toEqual([]);
  });

  it('has no service or domain logic importing the AWS SDK', () => {
    expect(report.violations.filter((v) => v.rule === 'sdk-in-domain')).toEqual([]);
  });

  it('has no lib/ or functions/ file importing tools/, emulator/, plugins/, bench/ or test/', () => {
    expect(report.violations.filter((v) => v.rule === 'runtime-imports-tooling')).toEqual([]);
  });

  it('has no shared module importing a domain', () => {
    expect(report.violations.filter((v) => v.rule === 'shared-imports-domain')).toEqual([]);
  });

  it('has no handler importing key builders, and stores only from its deps.ts', () => {
    expect(report.violations.filter((v) => v.rule === 'handler-imports-storage')).toEqual([]);
  });

  it('has no decision module (model, guards, outcome) importing the SDK, lib/aws or a store', () => {
    expect(report.violations.filter((v) => v.rule === 'decision-imports-io')).toEqual([]);
  });

  it('has no handler folder importing another handler folder', () => {
    expect(report.violations.filter((v) => v.rule === 'handler-imports-other-folder')).toEqual([]);
  });

  it('has no import cycle between files or between lib/ modules', () => {
    expect(report.violations.filter((v) => v.rule === 'cycle')).toEqual([]);
  });
});

describe('architecture: configuration and the scan gateway', () => {
  const graph = loadImportGraph();
  const importsOf = (prefix: string) =>
    [...graph.imports].filter(([from]) => from.startsWith(prefix)).flatMap(([from, to]) => to.map((t) => [from, t]));

  // A domain's settings are loaded beside its code: lib/config is only the shared part and the env reader,
  // so a function's bundle never carries another domain's loader (nor lib/auth's or lib/secrets').
  it('lib/config imports nothing but itself', () => {
    const outside = importsOf('lib/config/').filter(([, to]) => to.startsWith('lib/') && !to.startsWith('lib/config/'));
    expect(outside).toEqual([]);
  });

  // One job per file, each stage over the ones beneath it: a stage that reached up (answers calling the loop,
  // intake calling the loop) would make two stages one again. The file-cycle rule alone would allow a
  // stage to import one above it as long as nothing imported back.
  const STAGES = ['ports', 'answers', 'submit', 'intake', 'loop', 'index'];
  it('each scan gateway stage imports only the stages beneath it', () => {
    const rank = (file: string) => STAGES.indexOf(/^lib\/scan\/gateway\/([^/]+)\.ts$/.exec(file)?.[1] ?? '');
    const upward = importsOf('lib/scan/gateway/')
      .filter(([, to]) => to.startsWith('lib/scan/gateway/'))
      .filter(([from, to]) => rank(to) < 0 || rank(to) >= rank(from));
    expect(upward).toEqual([]);
    expect(graph.files.filter((f) => f.startsWith('lib/scan/gateway/')).map(rank)).not.toContain(-1);
  });

  it('intake and the loop do not import each other', () => {
    const between = importsOf('lib/scan/gateway/').filter(
      ([from, to]) => /\/(intake|loop)\.ts$/.test(from) && /\/(intake|loop)\.ts$/.test(to),
    );
    expect(between).toEqual([]);
  });
});

describe('architecture: the checker itself finds each kind of violation', () => {
  // A graph with one of each violation: proves the rules are not vacuous.
  const graph = {
    root: '/r',
    files: [
      'lib/aws/transact.ts',
      'lib/downloads/service.ts',
      'lib/downloads/keys.ts',
      'lib/downloads/dynamodb-store.ts',
      'lib/downloads/guards.ts',
      'lib/sync/service.ts',
      'lib/log/index.ts',
      'functions/sync/tick.ts',
      'functions/scan/deps.ts',
      'tools/stack/stack.ts',
    ],
    imports: new Map<string, string[]>([
      ['lib/sync/service.ts', ['lib/downloads/keys.ts', '@aws-sdk/client-dynamodb']],
      ['lib/log/index.ts', ['lib/downloads/service.ts']],
      ['lib/downloads/service.ts', ['tools/stack/stack.ts', 'lib/log/index.ts']],
      [
        'functions/sync/tick.ts',
        ['lib/downloads/dynamodb-store.ts', 'lib/downloads/keys.ts', 'functions/scan/deps.ts'],
      ],
      ['lib/downloads/guards.ts', ['lib/aws/transact.ts', 'lib/downloads/keys.ts']],
    ]),
  };
  const rules = new Set(analyseImports(graph).violations.map((v) => v.rule));

  it.each<Violation['rule']>([
    'domain-internals',
    'sdk-in-domain',
    'runtime-imports-tooling',
    'shared-imports-domain',
    'handler-imports-storage',
    'decision-imports-io',
    'cycle',
  ])('reports %s', (rule) => {
    expect(rules.has(rule)).toBe(true);
  });
});

describe('architecture: handlers reach storage only through their deps.ts', () => {
  const graph = (from: string, to: string) => ({
    root: '/r',
    files: [from, to],
    imports: new Map<string, string[]>([[from, [to]]]),
  });
  const rules = (from: string, to: string) => analyseImports(graph(from, to)).violations.map((v) => v.rule);

  it.each(['lib/sync/store.ts', 'lib/sync/data-store.ts', 'lib/sync/dynamodb-store.ts', 'lib/sync/keys.ts'])(
    'a handler importing %s is reported',
    (to) => {
      expect(rules('functions/sync/hourly.ts', to)).toContain('handler-imports-storage');
    },
  );

  it('deps.ts may build stores; a handler may import a service or a shared store', () => {
    expect(rules('functions/sync/deps.ts', 'lib/sync/dynamodb-store.ts')).toEqual([]);
    expect(rules('functions/sync/deps.ts', 'lib/sync/store.ts')).toEqual([]);
    expect(rules('functions/sync/hourly.ts', 'lib/sync/service.ts')).toEqual([]);
    expect(rules('functions/downloads/create.ts', 'lib/idempotency/store.ts')).toEqual([]);
  });
});
