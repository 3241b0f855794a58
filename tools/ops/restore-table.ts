import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { parseIsoTime, systemClock } from '../../lib/clock';
import { createAwsClients, TOOL_DYNAMODB_LIMITS } from '../../lib/aws/clients';
import { EnvReader } from '../../lib/config/env';
import { ConfigError } from '../../lib/config/errors';
import { progressReporter, ProgressOutput } from '../cli/progress';
import { CliArgs, cliSpec, parseCli, runCli, UsageError } from '../cli/run';
import { loadStackEnv } from '../cli/stack-env';
import { copyBack } from './copy-back';
import {
  describeTable,
  reapplySettings,
  restoreCommand,
  restoreInto,
  tableSettings,
  TableSettings,
  waitActive,
} from './restore';
import { verifyRestore } from './restore-verify';

/**
 * `npm run ops:restore -- --help`: the restore drill (tools/ops/restore.ts)
 * and cut-over (b), copy-back (tools/ops/copy-back.ts). The runbook:
 * docs/operations.md#restoring-a-table.
 */

export const USAGE = `usage: npm run ops:restore -- --table <name> --to <new name> [--time <ISO>] [options]
       npm run ops:restore -- --copy-back --from <restored> --table <original> [--execute]

Restores a DynamoDB table into a NEW table from point-in-time recovery, makes it like
its source (stream, TTL, PITR, deletion protection, tags), verifies it, and says how
to cut over. The source is never written; the new table must not exist.

  --table <name>           the table to restore
  --to <name>              the new table
  --time <ISO>             the point in time, UTC (2026-12-06T02:00:00Z); default: the latest restorable
  --method auto|pitr|copy  pitr: RestoreTableToPointInTime; copy: the source's current items copied by
                           a scan (DynamoDB Local has no PITR); auto (default): pitr, else copy
  --sample <n>             items compared by the verification (default 200)
  --wait-minutes <n>       how long the new table may take to become ACTIVE (default 240)
  --copy-back              cut-over (b): make --table hold exactly what --from holds (stop the writers first)
  --from <name>            with --copy-back: the restored table
  --execute                with --copy-back: write (without it: count what would change)
  --help                   this text

Environment: AWS_REGION; AWS_ENDPOINT_URL_DYNAMODB for DynamoDB Local (.stack/env is read
when present). Exit 0 done and verified; 1 the verification found a difference; 2 bad
usage or settings, or a step failed.`;

export { UsageError };

export const RESTORE_CLI = cliSpec({
  usage: USAGE,
  options: {
    table: { type: 'string' },
    to: { type: 'string' },
    from: { type: 'string' },
    time: { type: 'string' },
    method: { type: 'string' },
    sample: { type: 'string' },
    'wait-minutes': { type: 'string' },
    'copy-back': { type: 'boolean' },
    execute: { type: 'boolean' },
  },
});

export interface RestoreOptions {
  table?: string;
  to?: string;
  from?: string;
  time?: number;
  method: 'auto' | 'pitr' | 'copy';
  sample: number;
  waitMinutes: number;
  copyBack: boolean;
  execute: boolean;
}

const TABLE = /^[A-Za-z0-9._-]{3,255}$/;

export const parseRestoreArgs = (args: string[]): RestoreOptions => restoreOptions(parseCli(RESTORE_CLI, args));

function restoreOptions({ values: v }: CliArgs<typeof RESTORE_CLI.options>): RestoreOptions {
  const table = (name: string, text: string | undefined) => {
    if (text !== undefined && !TABLE.test(text))
      throw new UsageError(`--${name}: not a table name: ${JSON.stringify(text)}`);
    return text;
  };
  const count = (name: string, text: string | undefined, fallback: number, max: number) => {
    if (text === undefined) return fallback;
    if (!/^\d{1,6}$/.test(text) || Number(text) < 1 || Number(text) > max)
      throw new UsageError(`--${name} must be 1..${max}`);
    return Number(text);
  };
  const time = v.time === undefined ? undefined : parseIsoTime(v.time);
  if (v.time !== undefined && time === undefined)
    throw new UsageError(
      `--time must be an ISO-8601 UTC time like 2026-12-06T02:00:00Z, not ${JSON.stringify(v.time)}`,
    );
  const method = v.method ?? 'auto';
  if (method !== 'auto' && method !== 'pitr' && method !== 'copy')
    throw new UsageError('--method must be auto, pitr or copy');
  const o: RestoreOptions = {
    table: table('table', v.table),
    to: table('to', v.to),
    from: table('from', v.from),
    ...(time !== undefined ? { time } : {}),
    method,
    sample: count('sample', v.sample, 200, 10_000),
    waitMinutes: count('wait-minutes', v['wait-minutes'], 240, 24 * 60),
    copyBack: v['copy-back'] === true,
    execute: v.execute === true,
  };
  if (o.copyBack ? !o.table || !o.from || o.to : !o.table || !o.to || o.from || o.execute)
    throw new UsageError(
      o.copyBack
        ? '--copy-back takes --from and --table (not --to)'
        : 'a restore takes --table and --to (--from and --execute go with --copy-back)',
    );
  if ((o.copyBack ? o.from : o.to) === o.table) throw new UsageError('the two tables must differ');
  return o;
}

export interface RestoreRunDeps {
  client: DynamoDBClient;
  out: (line: string) => void;
  progress: ProgressOutput;
  now: () => number;
}

export async function runRestore(o: RestoreOptions, deps: RestoreRunDeps): Promise<number> {
  return o.copyBack ? runCopyBack(o, deps) : runRestoreDrill(o, deps);
}

async function runRestoreDrill(o: RestoreOptions, { client, out, progress, now }: RestoreRunDeps): Promise<number> {
  const [table, to] = [o.table!, o.to!];
  if (await describeTable(client, to)) throw new UsageError(`${to} exists already: a restore goes into a new table`);
  const source = await tableSettings(client, table);
  out(`[1/5] source ${table}: ${describeSettings(source)}`);

  out(
    `[2/5] restore ${table} → ${to} ${o.time === undefined ? 'at the latest restorable time' : `as at ${new Date(o.time).toISOString()}`}`,
  );
  out(`      $ ${restoreCommand(table, to, o.time)}`);
  const estimate = (await describeTable(client, table))?.ItemCount ?? 0;
  const bar = progressReporter(progress, estimate, now, 5000, 'items');
  const restored = await restoreInto(client, source, to, {
    time: o.time,
    method: o.method,
    onCopied: (n) => bar.tick(Math.min(n, estimate)),
  });
  if (restored.method === 'copy') bar.end(restored.copied ?? 0);
  out(
    restored.method === 'pitr'
      ? '      RestoreTableToPointInTime accepted'
      : `      NOT RUN here: ${restored.note}; ${restored.copied} items copied by a scan instead`,
  );

  const waited = await waitActive(client, to, o.waitMinutes * 60_000);
  out(`[3/5] ${to} ACTIVE after ${(waited / 1000).toFixed(1)} s`);
  out(`      $ aws dynamodb wait table-exists --table-name ${to}`);

  out(`[4/5] re-apply what a restore does not carry`);
  for (const r of await reapplySettings(client, source, to))
    out(
      `      ${r.setting.padEnd(20)} ${label(r.outcome).padEnd(8)} ${r.detail}${r.command ? `\n${' '.repeat(36)}$ ${r.command}` : ''}`,
    );

  out(`[5/5] verify`);
  const v = await verifyRestore(client, source, to, o.sample);
  // A copy must match item for item; a restore is of an earlier time, while the source kept changing.
  const exact = restored.method === 'copy';
  out(
    `      items: ${table} ${v.sourceItems}, ${to} ${v.targetItems}  ($ aws dynamodb scan --table-name ${to} --select COUNT)`,
  );
  out(
    `      sample of ${v.sample.size} items of ${table}: ${v.sample.equal} equal, ${v.sample.differ} differ, ${v.sample.missing} missing` +
      (exact ? '' : ' (differences are expected: items changed after the restore time)'),
  );
  for (const s of v.settings)
    out(
      `      ${s.setting.padEnd(20)} ${s.ok === 'unsupported' ? 'NOT RUN ' : s.ok ? 'ok      ' : 'DIFFERS '} expected ${s.expected}, found ${s.actual}`,
    );
  const identical = v.sourceItems === v.targetItems && v.sample.differ === 0 && v.sample.missing === 0;
  const settingsOk = v.settings.every((s) => s.ok !== false);
  const verified = settingsOk && (identical || !exact);
  out(verified ? `verified: ${to} is ready` : `NOT verified: ${to} differs from ${table} (see above)`);
  const target = await describeTable(client, to);
  out(cutOver(table, to, source, target?.TableArn, target?.LatestStreamArn));
  return verified ? 0 : 1;
}

async function runCopyBack(o: RestoreOptions, { client, out, now }: RestoreRunDeps): Promise<number> {
  const [restored, original] = await Promise.all([tableSettings(client, o.from!), tableSettings(client, o.table!)]);
  out(`copy back ${restored.name} → ${original.name}${o.execute ? '' : ' (dry run: nothing is written)'}`);
  if (original.stream)
    out(
      `  ${original.name} has a stream (${original.stream}): every write below is a stream record its consumers will see ` +
        `(the Telegram notifier announces each changed download). Disable the mapping first (docs/operations.md#cut-over).`,
    );
  const began = now();
  const plan = await copyBack(client, restored, original, { execute: o.execute });
  const verb = o.execute ? '' : 'would be ';
  out(
    `  ${plan.puts} items ${verb}put (missing or different), ${plan.deletes} ${verb}deleted (not in ${restored.name}), ${plan.unchanged} unchanged`,
  );
  if (plan.examples.put.length) out(`  put, e.g.: ${plan.examples.put.join('; ')}`);
  if (plan.examples.delete.length) out(`  delete, e.g.: ${plan.examples.delete.join('; ')}`);
  out(o.execute ? `done in ${((now() - began) / 1000).toFixed(1)} s` : 'nothing was written; add --execute to write');
  return 0;
}

function describeSettings(s: TableSettings): string {
  const indexes = [...(s.create.GlobalSecondaryIndexes ?? []), ...(s.create.LocalSecondaryIndexes ?? [])].map(
    (i) => i.IndexName,
  );
  const pitr =
    s.pitr === 'unsupported'
      ? 'PITR not on this endpoint'
      : s.pitr.enabled
        ? `PITR on (restorable ${s.pitr.earliest} … ${s.pitr.latest})`
        : 'PITR OFF';
  return [
    `key ${s.keyNames.join('/')}`,
    `indexes ${indexes.join(',') || 'none'}`,
    s.billing,
    `stream ${s.stream ?? 'off'}`,
    `TTL ${s.ttlAttribute ?? 'off'}`,
    pitr,
    `deletion protection ${s.deletionProtection ? 'on' : 'off'}`,
    `tags ${s.tags === 'unsupported' ? 'not on this endpoint' : s.tags.length}`,
  ].join(', ');
}

const label = (outcome: string) =>
  ({ applied: 'applied', already: 'kept', none: '-', unsupported: 'NOT RUN', 'by hand': 'BY HAND' })[outcome] ??
  outcome;

function cutOver(table: string, to: string, source: TableSettings, arn?: string, streamArn?: string): string {
  return [
    `cut-over: the service still uses ${table}. Choose one (docs/operations.md#cut-over):`,
    `  a) point the stage at ${to} through the template's table-name override (decision 286) and redeploy:`,
    `     table ${arn ?? to}` + (source.stream ? `, stream ${streamArn ?? '?'} (for telegramNotify's mapping)` : ''),
    `  b) copy back into ${table}, writers stopped: npm run ops:restore -- --copy-back --from ${to} --table ${table}` +
      ` (a dry run), then again with --execute`,
  ].join('\n');
}

async function main(args: CliArgs<typeof RESTORE_CLI.options>): Promise<number> {
  const options = restoreOptions(args);
  loadStackEnv();
  const r = new EnvReader(process.env);
  const region = r.string('AWS_REGION', { default: 'us-east-1', pattern: /^[a-z]{2}(-[a-z]+)+-\d$/ });
  r.url('AWS_ENDPOINT_URL_DYNAMODB', ['http', 'https'], { optional: true });
  r.done();
  const client = createAwsClients({ region, endpoints: {} }, TOOL_DYNAMODB_LIMITS).dynamodb;
  try {
    return await runRestore(options, {
      client,
      out: (line) => process.stdout.write(`${line}\n`),
      progress: process.stderr,
      now: systemClock,
    });
  } finally {
    client.destroy();
  }
}

if (require.main === module) runCli(RESTORE_CLI, main, { expected: [ConfigError] });
