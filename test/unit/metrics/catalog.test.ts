import fs from 'node:fs';
import path from 'node:path';
import { dimensionSets, METRIC_NAMES, METRICS, type MetricName } from '../../../lib/metrics/catalog';

/**
 * One table of metrics: lib/metrics/catalog.ts and docs/operations.md's
 * "Metrics" say the same, row for row; and every metric listed is emitted by
 * some production code (so an alarm or a dashboard naming one watches a
 * figure that exists).
 */

const ROOT = path.resolve(__dirname, '../../..');

function docRows(): string[][] {
  const doc = fs.readFileSync(path.join(ROOT, 'docs/operations.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Metrics'));
  const end = section.indexOf('\n## ', 3);
  return (end > 0 ? section.slice(0, end) : section)
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

export function dimensionsCell(name: MetricName): string {
  return dimensionSets(name)
    .map((set) => '`' + set.map((d) => (d === 'domain' ? `domain=${METRICS[name].domain}` : d)).join(', ') + '`')
    .join(' and ');
}

/** Production files (lib/, functions/), the catalog itself aside. */
function sources(dir: string): string[] {
  return fs.readdirSync(path.join(ROOT, dir), { recursive: true, withFileTypes: true }).flatMap((entry) => {
    const file = path.join(entry.parentPath, entry.name);
    return entry.isFile() && file.endsWith('.ts') && !file.endsWith('catalog.ts') ? [file] : [];
  });
}

describe('the metrics catalog', () => {
  it('is docs/operations.md\'s "Metrics" table, row for row', () => {
    expect(docRows()).toEqual(
      METRIC_NAMES.map((name) => {
        const m = METRICS[name];
        return [`\`${name}\``, m.unit, dimensionsCell(name), m.statistic, m.meaning, m.action];
      }),
    );
  });

  it('names only metrics some production code emits', () => {
    const code = [...sources('lib'), ...sources('functions')].map((f) => fs.readFileSync(f, 'utf8')).join('\n');
    const emitted = METRIC_NAMES.filter((name) =>
      new RegExp(`emitMetrics?\\(\\s*(\\{[^)]*\\b${name}\\b|'${name}')`).test(code),
    );
    expect(emitted).toEqual(METRIC_NAMES);
  });

  it('keeps names, units and dimension sets within what CloudWatch and the template expect', () => {
    for (const name of METRIC_NAMES) {
      expect(name).toMatch(/^[A-Z][A-Za-z]{2,63}$/);
      expect(dimensionSets(name).every((set) => set.length <= 30 && new Set(set).size === set.length)).toBe(true);
      expect(METRICS[name].meaning).not.toContain('|');
      expect(METRICS[name].action).not.toContain('|');
    }
  });
});
