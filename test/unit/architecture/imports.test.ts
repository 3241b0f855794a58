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

  it('has no import cycle between files or between lib/ modules', () => {
    expect(report.violations.filter((v) => v.rule === 'cycle')).toEqual([]);
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
      'tools/stack/stack.ts',
    ],
    imports: new Map<string, string[]>([
      ['lib/sync/service.ts', ['lib/downloads/keys.ts', '@aws-sdk/client-dynamodb']],
      ['lib/log/index.ts', ['lib/downloads/service.ts']],
      ['lib/downloads/service.ts', ['tools/stack/stack.ts', 'lib/log/index.ts']],
      ['functions/sync/tick.ts', ['lib/downloads/dynamodb-store.ts', 'lib/downloads/keys.ts']],
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
