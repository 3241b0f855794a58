import fs from 'node:fs';
import { createAwsClients, TOOL_DYNAMODB_LIMITS } from '../../lib/aws/clients';
import { EnvReader } from '../../lib/config/env';
import { ConfigError } from '../../lib/config/errors';
import { DynamoDownloadStore } from '../../lib/downloads/dynamodb-store';
import { importLegacyDownloads, LegacyImportReport } from '../../lib/downloads/legacy';
import { checkLegacyImport, LegacyCheckReport } from '../../lib/downloads/legacy-check';
import { LegacyFileError, NodeSqliteMissingError, openLegacyFile } from './legacy-sqlite';
import { progressReporter } from './progress';
import { CliArgs, cliSpec, runCli, UsageError } from './run';
import { loadStackEnv } from './stack-env';

/**
 * `npm run import:legacy -- --help`
 *
 * Moves a legacy installation's downloads (SQLite, numeric ids) into the
 * downloads table through the guarded store (lib/downloads/legacy.ts). The
 * target is the environment's: TABLE_DOWNLOADS, AWS_REGION and, for LocalStack
 * or the embedded stack, AWS_ENDPOINT_URL_DYNAMODB (read from .stack/env when
 * `npm start` runs and the environment does not set them). Safe to kill and
 * re-run: imported rows are skipped. Then the consistency check
 * (lib/downloads/legacy-check.ts) reads the table against the file and prints
 * what does not add up. Exit 0 when every row was decided (imported, already
 * there, conflict or bad row) and the check passed, 1 when writes failed
 * (re-run), 2 on bad usage or an unreadable file, 3 when the check failed.
 */

const USAGE = `usage: npm run import:legacy -- --sqlite <file> [--dry-run] [--report <file.json>] [--concurrency <n>]

Moves a legacy installation's downloads (SQLite) into the downloads table, then
checks the table against the file. Safe to stop and run again: imported rows are
skipped.

  --sqlite <file>        the legacy SQLite file (read only)
  --dry-run              decide every row, write nothing
  --report <file.json>   write the report (old id → new id, conflicts, the check) there
  --concurrency <n>      batches in flight, 1-64 (default 4)
  --help                 this text

The target is the environment's: TABLE_DOWNLOADS, AWS_REGION, AWS_ENDPOINT_URL_DYNAMODB
(read from .stack/env when \`npm start\` runs). Exit 0 every row decided and the check
passed, 1 writes failed (run again), 2 bad usage, settings or file, 3 the check failed.`;
const SHOWN = 20;

export const IMPORT_CLI = cliSpec({
  usage: USAGE,
  options: {
    sqlite: { type: 'string' },
    'dry-run': { type: 'boolean' },
    report: { type: 'string' },
    concurrency: { type: 'string' },
  },
});

function importOptions({ values }: CliArgs<typeof IMPORT_CLI.options>) {
  if (!values.sqlite) throw new UsageError('--sqlite <file> is required');
  const n = values.concurrency ?? '4';
  if (!/^[1-9][0-9]?$/.test(n) || Number(n) > 64) throw new UsageError('--concurrency must be 1..64');
  return { sqlite: values.sqlite, dryRun: values['dry-run'] === true, report: values.report, concurrency: Number(n) };
}

function target() {
  const r = new EnvReader(process.env);
  const table = r.string('TABLE_DOWNLOADS', {
    pattern: /^[A-Za-z0-9._-]{3,255}$/,
    hint: 'the downloads table (run `npm start`, or set it for LocalStack/AWS)',
  });
  const region = r.string('AWS_REGION', {
    default: 'us-east-1',
    pattern: /^[a-z]{2}(-[a-z]+)+-\d$/,
    hint: 'an AWS region',
  });
  const dynamodb = r.url('AWS_ENDPOINT_URL_DYNAMODB', ['http', 'https'], { optional: true });
  r.done();
  return { table, region, dynamodb };
}

export function summaryLines(file: string, table: string, report: LegacyImportReport): string[] {
  const s = report.summary;
  const lines = [
    `${report.dry_run ? 'DRY RUN (nothing written): ' : ''}legacy import of ${file} into ${table}: ${s.rows} rows`,
    `  imported       ${s.imported}${s.conflicts ? `   (${s.conflicts} of them as failed: conflict)` : ''}`,
    `  already there  ${s.already_there}`,
    `  conflicts      ${s.conflicts}`,
    `  bad rows       ${s.bad_rows}`,
    ...(s.errors ? [`  write errors   ${s.errors}   (re-run to retry them)`] : []),
    ...(report.warnings.length ? [`  warnings       ${report.warnings.length}`] : []),
  ];
  const some = <T>(items: T[], line: (item: T) => string) => [
    ...items.slice(0, SHOWN).map(line),
    ...(items.length > SHOWN ? [`  … ${items.length - SHOWN} more in the --report file`] : []),
  ];
  lines.push(
    ...some(
      report.conflicts,
      (c) =>
        `conflict: legacy id ${c.legacy_id} → ${c.id} imported failed: infohash ${c.infohash} belongs to active download ${c.owner_id}${c.owner_legacy_id ? ` (legacy id ${c.owner_legacy_id})` : ''}`,
    ),
    ...some(
      report.bad_rows,
      (b) => `bad row: legacy id ${b.legacy_id ?? 'NULL'}${b.rowid ? ` (rowid ${b.rowid})` : ''}: ${b.reason}`,
    ),
    ...some(report.errors, (e) => `write failed: legacy id ${e.legacy_id} → ${e.id}: ${e.reason}`),
    ...some(report.warnings, (w) => `warning: legacy id ${w.legacy_id}: ${w.reason}`),
  );
  return lines;
}

export function checkLines(table: string, check: LegacyCheckReport): string[] {
  const signed = (n: number) => (n > 0 ? `+${n}` : n < 0 ? String(n) : '');
  const lines = [
    `consistency check against ${table}: ${check.found} of ${check.expected} good rows in the table` +
      (check.rows > check.expected ? ` (${check.rows - check.expected} bad or repeated rows are not expected)` : ''),
    `  ${'state'.padEnd(12)}${['file', 'table', 'conflicts', 'changed', 'unexplained'].map((h) => h.padStart(12)).join('')}`,
    ...check.states.map((s) =>
      `  ${s.state.padEnd(12)}${[
        String(s.file),
        String(s.table),
        signed(s.conflicts),
        signed(s.changed),
        signed(s.unexplained),
      ]
        .map((v) => v.padStart(12))
        .join('')}`.trimEnd(),
    ),
    ...(check.conflicts || check.changed
      ? [
          '  (conflicts: active rows imported failed, an older download holds the hash; changed: moved by the service since)',
        ]
      : []),
    `  ${check.checked_hashes} infohashes of active rows, active downloads and guards checked: one active download each, named by its guard`,
  ];
  lines.push(
    ...check.problems.slice(0, SHOWN).map((p) => `problem: ${p.detail}`),
    ...(check.problems.length > SHOWN ? [`  … ${check.problems.length - SHOWN} more in the --report file`] : []),
    check.ok
      ? 'consistency check: OK'
      : `consistency check: FAILED, ${check.problems.length} problem${check.problems.length === 1 ? '' : 's'} (listed above)`,
  );
  return lines;
}

async function main(args: CliArgs<typeof IMPORT_CLI.options>): Promise<number> {
  const opts = importOptions(args);
  loadStackEnv();
  const { table, region, dynamodb } = target();
  const file = openLegacyFile(opts.sqlite);
  const aws = createAwsClients({ region, endpoints: { dynamodb } }, TOOL_DYNAMODB_LIMITS);
  try {
    const store = new DynamoDownloadStore({ documents: aws.documents, table });
    const progress = progressReporter(process.stderr, file.total);
    let done = 0;
    const report = await importLegacyDownloads(file.rows(), {
      store,
      dryRun: opts.dryRun,
      concurrency: opts.concurrency,
      onProgress: (n) => progress.tick((done = n)),
    });
    progress.end(done);
    // The old id → new id map is saved before the check reads anything: a failing check must not lose it.
    const save = (check?: LegacyCheckReport) =>
      opts.report &&
      fs.writeFileSync(
        opts.report,
        JSON.stringify({ source: opts.sqlite, table, ...report, ...(check ? { check } : {}) }, null, 2) + '\n',
      );
    save();
    process.stdout.write(summaryLines(opts.sqlite, table, report).join('\n') + '\n');
    if (opts.report) process.stdout.write(`report (old id → new id) written to ${opts.report}\n`);
    if (opts.dryRun) {
      process.stdout.write('consistency check: not run (dry run: nothing was written)\n');
      return report.summary.errors > 0 ? 1 : 0;
    }
    process.stderr.write('checking the table against the file…\n');
    let check: LegacyCheckReport;
    try {
      check = await checkLegacyImport(file.rows(), store);
    } catch (err) {
      if (err instanceof LegacyFileError) throw err;
      process.stdout.write(`consistency check: could not read the table (${(err as Error).message}): re-run\n`);
      return 1;
    }
    save(check);
    process.stdout.write(checkLines(table, check).join('\n') + '\n');
    if (opts.report) process.stdout.write(`the check is in ${opts.report} too\n`);
    if (report.summary.errors > 0) return 1;
    return check.ok ? 0 : 3;
  } finally {
    file.close();
    aws.dynamodb.destroy();
    aws.s3.destroy();
  }
}

if (require.main === module)
  runCli(IMPORT_CLI, main, { expected: [LegacyFileError, NodeSqliteMissingError, ConfigError] });
