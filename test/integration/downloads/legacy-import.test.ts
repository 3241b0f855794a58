import { DeleteCommand, PutCommand, ScanCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Clock, isoTime } from '../../../lib/clock';
import { DynamoDownloadStore } from '../../../lib/downloads/dynamodb-store';
import {
  downloadKey,
  downloadToItem,
  guardKey,
  legacyIdItem,
  legacyIdKey,
  membershipItem,
} from '../../../lib/downloads/keys';
import { importLegacyDownloads, LegacyImportReport } from '../../../lib/downloads/legacy';
import { checkLegacyImport } from '../../../lib/downloads/legacy-check';
import { idTime } from '../../../lib/ident';
import { openLegacyFile } from '../../../tools/cli/legacy-sqlite';
import { legacyFile, LegacyRowSpec, sqliteTime, tableItems } from '../../support/legacy';
import { isolatedTable, stackClients } from '../../support/stack';

/**
 * The legacy import against DynamoDB Local, from SQLite files the tests build.
 * Each test has its own copy of the downloads table: legacy ids 1..n repeat
 * between tests, and the checks count every item of the table.
 */
jest.setTimeout(300_000); // 10,000 rows on an emulator shared by a loaded 2-core machine

const aws = stackClients();
afterAll(() => aws.dynamodb.destroy());

const hex = (bytes: number) => randomBytes(bytes).toString('hex');
const BASE = Date.UTC(2021, 5, 1, 12, 0, 0);

async function withTable<T>(run: (store: DynamoDownloadStore, table: string) => Promise<T>): Promise<T> {
  const { name, drop } = await isolatedTable(aws, 'DownloadsTable');
  try {
    return await run(new DynamoDownloadStore({ documents: aws.documents, table: name }), name);
  } finally {
    await drop();
  }
}

async function countDownloads(table: string): Promise<number> {
  let count = 0;
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await aws.documents.send(
      new ScanCommand({
        TableName: table,
        Select: 'COUNT',
        FilterExpression: 'entity = :d',
        ExpressionAttributeValues: { ':d': 'download' },
        ExclusiveStartKey,
      }),
    );
    count += page.Count ?? 0;
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return count;
}

/** A v1 hash as old magnets carried it: 32 characters of RFC 4648 base32. */
function base32(hexText: string): string {
  const bits = [...Buffer.from(hexText, 'hex')].map((b) => b.toString(2).padStart(8, '0')).join('');
  return bits
    .match(/.{5}/g)!
    .map((chunk) => 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567'[parseInt(chunk, 2)])
    .join('');
}

async function importFile(
  file: string,
  store: DynamoDownloadStore,
  opts: { dryRun?: boolean; now?: Clock } = {},
): Promise<LegacyImportReport> {
  const legacy = openLegacyFile(file);
  try {
    return await importLegacyDownloads(legacy.rows(), { store, ...opts });
  } finally {
    legacy.close();
  }
}

function runCli(args: string[], table: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(path.resolve('node_modules/.bin/tsx'), ['tools/cli/import-legacy.ts', ...args], {
      env: { ...process.env, TABLE_DOWNLOADS: table },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c) => (stdout += c));
    child.stderr.on('data', (c) => (stderr += c));
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** A line of the check's table as the CLI prints it: the state, then right-aligned columns. */
const stateLine = (state: string, ...columns: Array<string | number>) =>
  `\n  ${state.padEnd(12)}${columns.map((c) => String(c).padStart(12)).join('')}`.trimEnd() + '\n';

/** ULIDs in old-id order must be strictly increasing. */
function expectOldIdOrder(ids: Record<string, string>) {
  const byOldId = Object.entries(ids).sort(([a], [b]) => (BigInt(a) < BigInt(b) ? -1 : 1));
  for (let i = 1; i < byOldId.length; i++) {
    if (!(byOldId[i][1] > byOldId[i - 1][1]))
      throw new Error(
        `old id ${byOldId[i][0]} got ${byOldId[i][1]}, not after ${byOldId[i - 1][1]} of old id ${byOldId[i - 1][0]}`,
      );
  }
}

/** 10,000 rows written in batches that share a second, 10% of them active. */
function bigFile(count: number) {
  const rows: LegacyRowSpec[] = [];
  let second = 0;
  while (rows.length < count) {
    const batch = 1 + Math.floor(Math.random() * 40);
    for (let i = 0; i < batch && rows.length < count; i++) {
      rows.push({
        infohash: hex(20),
        state: rows.length % 10 === 0 ? 'downloading' : 'completed',
        name: `row ${rows.length + 1}`,
        created_at: sqliteTime(BASE + second * 1000),
      });
    }
    second += 1 + Math.floor(Math.random() * 3);
  }
  return { rows, ...legacyFile(rows) };
}

describe('legacy import', () => {
  it('10,000 rows with shared seconds: ULID order = old-id order, ULID time = created_at; a re-run imports nothing new', () =>
    withTable(async (store, table) => {
      const big = bigFile(10_000);
      try {
        const started = Date.now();
        const report = await importFile(big.file, store);
        const imported = Date.now() - started;
        // The closing check reads every download, every guard and the holders of 1,000 active hashes.
        const legacy = openLegacyFile(big.file);
        const checkStarted = Date.now();
        const check = await checkLegacyImport(legacy.rows(), store).finally(() => legacy.close());
        const checked = Date.now() - checkStarted;
        process.stdout.write(
          `10,000 rows: import ${imported} ms, check ${checked} ms (x${(checked / imported).toFixed(2)})\n`,
        );
        expect(check).toMatchObject({ ok: true, expected: 10_000, found: 10_000, checked_hashes: 1_000, problems: [] });
        expect(checked).toBeLessThan(imported); // reads only: never the import's cost again
        expect(report.summary).toEqual({
          rows: 10_000,
          imported: 10_000,
          already_there: 0,
          conflicts: 0,
          bad_rows: 0,
          errors: 0,
        });
        expectOldIdOrder(report.ids);
        for (const [oldId, id] of Object.entries(report.ids)) {
          expect(idTime(id)).toBe(Date.parse(`${big.rows[Number(oldId) - 1].created_at!.replace(' ', 'T')}Z`));
        }

        const items = await tableItems(aws, table);
        expect(items.download).toHaveLength(10_000);
        expect(items.guard).toHaveLength(1_000);
        expect(Object.fromEntries(items['legacy-id'].map((i) => [i.legacy_id, i.download_id]))).toEqual(report.ids);
        const sample = await store.get(report.ids['1']);
        expect(sample).toMatchObject({
          state: 'downloading',
          name: 'row 1',
          infohashes: [{ infohash: big.rows[0].infohash, kind: 'v1' }],
          created_at: isoTime(BASE),
        });

        const again = await importFile(big.file, store);
        expect(again.summary).toEqual({
          rows: 10_000,
          imported: 0,
          already_there: 10_000,
          conflicts: 0,
          bad_rows: 0,
          errors: 0,
        });
        expect(again.ids).toEqual(report.ids);
        expect(await countDownloads(table)).toBe(10_000);
      } finally {
        big.remove();
      }
    }));

  it('maps hashes, times, names and conflicts, reports bad rows without stopping; a dry run decides the same and writes nothing', () =>
    withTable(async (store, table) => {
      const shared = hex(20);
      const v1 = hex(20);
      const v2 = hex(32);
      const v1b32 = hex(20);
      const t = (s: number) => sqliteTime(BASE + s * 1000);
      const { file, remove } = legacyFile([
        /* 1 */ { infohash: base32(v1b32), state: 'completed', name: 'Sintel', created_at: t(0) },
        /* 2 */ { infohash: v1.toUpperCase(), state: 'queued', name: '日本語のファイル', created_at: t(0) },
        /* 3 */ {
          infohash: v2,
          state: 'paused',
          name: 'Ünïcödé — ✓ 🎬',
          created_at: t(0),
          updated_at: t(5),
          source_added_at: t(-60),
        },
        /* 4 */ { infohash: shared, state: 'downloading', name: 'first', created_at: 'yesterday' },
        /* 5 */ { infohash: shared, state: 'stuck', name: 'second', created_at: t(1), idempotency_key: null },
        /* 6 */ { infohash: hex(20), state: 'failed', name: 'a/b', created_at: '2021-02-30 10:00:00' },
        /* 7 */ { infohash: null, state: 'completed' },
        /* 8 */ { infohash: 'xyz', state: 'completed' },
        /* 9 */ { infohash: hex(19), state: 'completed' },
        /* 10 */ { infohash: hex(20), state: 'seeding' },
        /* 11 */ { infohash: hex(20), state: null },
        /* 12 */ { infohash: hex(20), state: 'cancelled', name: null, created_at: null },
      ]);
      const now = Date.UTC(2026, 11, 3, 6, 0, 0, 123);
      try {
        const dry = await importFile(file, store, { now: () => now, dryRun: true });
        expect(await tableItems(aws, table)).toEqual({});
        const report = await importFile(file, store, { now: () => now });
        // The dry run decided what the import did, down to the ids (a function of the file and the time).
        expect(dry).toEqual({ ...report, dry_run: true });
        expect(report.summary).toEqual({
          rows: 12,
          imported: 7,
          already_there: 0,
          conflicts: 1,
          bad_rows: 5,
          errors: 0,
        });
        expect(report.bad_rows).toEqual([
          { legacy_id: '7', reason: 'no infohash' },
          { legacy_id: '8', reason: expect.stringMatching(/invalid infohash "xyz"/) },
          { legacy_id: '9', reason: expect.stringMatching(/invalid infohash/) },
          { legacy_id: '10', reason: 'unknown state "seeding"' },
          { legacy_id: '11', reason: 'no state' },
        ]);
        const get = async (oldId: string) => (await store.get(report.ids[oldId]))!;

        expect((await get('1')).infohashes).toEqual([{ infohash: v1b32, kind: 'v1' }]);
        expect((await get('2')).infohashes).toEqual([{ infohash: v1, kind: 'v1' }]);
        expect(await get('3')).toMatchObject({
          name: 'Ünïcödé — ✓ 🎬',
          infohashes: [{ infohash: v2, kind: 'v2' }],
          updated_at: isoTime(BASE + 5000),
          source_added_at: isoTime(BASE - 60_000),
        });
        expect((await get('2')).name).toBe('日本語のファイル');
        expect((await store.findActiveByInfohash(v1))?.id).toBe(report.ids['2']);

        // Two active rows with one hash: the older id keeps it, the younger arrives failed and is named.
        expect(await get('4')).toMatchObject({ state: 'downloading', name: 'first' });
        expect(await get('5')).toMatchObject({ state: 'failed', name: 'second' });
        expect((await store.findActiveByInfohash(shared))?.id).toBe(report.ids['4']);
        expect(report.conflicts).toEqual([
          { legacy_id: '5', id: report.ids['5'], infohash: shared, owner_id: report.ids['4'], owner_legacy_id: '4' },
        ]);

        // Unreadable times take the import time and keep the old-id order among themselves.
        for (const oldId of ['4', '6', '12']) expect(idTime(report.ids[oldId])).toBe(now);
        expect(report.ids['4'] < report.ids['6'] && report.ids['6'] < report.ids['12']).toBe(true);
        expect(report.ids['1'] < report.ids['2'] && report.ids['2'] < report.ids['3']).toBe(true);
        expect(await get('12')).toMatchObject({
          name: expect.stringMatching(/^[0-9a-f]{40}$/),
          created_at: isoTime(now),
        });
        expect((await get('6')).name).toMatch(/^[0-9a-f]{40}$/);
        expect(report.warnings.map((w) => w.legacy_id)).toEqual(['4', '6', '6', '12']);

        // A second run, later: nothing new, and the stored import time is the first run's.
        const later = await importFile(file, store, { now: () => now + 3_600_000 });
        expect(later.summary).toMatchObject({ imported: 0, already_there: 7, bad_rows: 5 });
        expect(later.import_time).toBe(isoTime(now));
      } finally {
        remove();
      }
    }));

  it('reads a minimal table (id, infohash, state) and reports a NULL id with its rowid', () =>
    withTable(async (store) => {
      const { file, remove } = legacyFile(
        [
          { id: 3, infohash: hex(20), state: 'completed' },
          { id: null, infohash: hex(20), state: 'completed' },
          { id: 'x', infohash: hex(20), state: 'queued' },
          { id: 3, infohash: hex(20), state: 'completed' },
        ],
        'CREATE TABLE download (id INTEGER, infohash TEXT, state TEXT)',
      );
      try {
        const report = await importFile(file, store);
        expect(report.summary).toMatchObject({ rows: 4, imported: 1, bad_rows: 3 });
        expect(report.bad_rows).toEqual([
          { legacy_id: null, rowid: '2', reason: 'NULL id' },
          { legacy_id: '3', reason: 'duplicate id' },
          { legacy_id: null, rowid: '3', reason: 'id is not a positive integer: "x"' },
        ]);
        expect(await store.get(report.ids['3'])).toMatchObject({
          state: 'completed',
          name: expect.stringMatching(/^[0-9a-f]{40}$/),
        });
      } finally {
        remove();
      }
    }));

  it('two imports of one file at once write each row exactly once, with the same ids', () =>
    withTable(async (store, table) => {
      const big = bigFile(300);
      try {
        const [a, b] = await Promise.all([importFile(big.file, store), importFile(big.file, store)]);
        expect(a.summary.errors + b.summary.errors).toBe(0);
        expect(a.summary.imported + b.summary.imported).toBe(300);
        expect(a.ids).toEqual(b.ids);
        expect(a.import_time).toBe(b.import_time);
        const items = await tableItems(aws, table);
        expect(items.download).toHaveLength(300);
        expect(items['legacy-id']).toHaveLength(300);
        expect(items.guard).toHaveLength(30);
        expectOldIdOrder(a.ids);
      } finally {
        big.remove();
      }
    }));

  it('a row whose id is taken fails alone: the rest of its batch is imported and reported', () =>
    withTable(async (store, table) => {
      const second = sqliteTime(BASE);
      const a = legacyFile(
        Array.from({ length: 3 }, () => ({ infohash: hex(20), state: 'completed', created_at: second })),
      );
      // A second file with rows in the same second mints the same three ULIDs first (its ids 101-103).
      const b = legacyFile(
        Array.from({ length: 10 }, (_, i) => ({
          id: 101 + i,
          infohash: hex(20),
          state: 'completed',
          created_at: i < 3 ? second : sqliteTime(BASE + 5000),
        })),
      );
      try {
        await importFile(a.file, store);
        const report = await importFile(b.file, store);
        expect(report.summary).toMatchObject({ imported: 7, errors: 3 });
        expect(report.errors.map((e) => e.legacy_id)).toEqual(['101', '102', '103']);
        expect(Object.keys(report.ids)).toEqual(['104', '105', '106', '107', '108', '109', '110']);
        expect(await countDownloads(table)).toBe(10);
      } finally {
        a.remove();
        b.remove();
      }
    }));

  it('a run killed half way (SIGKILL), then re-run, ends with exactly one download per row, in old-id order', () =>
    withTable(async (store, table) => {
      const big = bigFile(1_000);
      try {
        const child = spawn(
          path.resolve('node_modules/.bin/tsx'),
          ['tools/cli/import-legacy.ts', '--sqlite', big.file, '--concurrency', '4'],
          {
            env: { ...process.env, TABLE_DOWNLOADS: table },
            stdio: ['ignore', 'ignore', 'pipe'],
          },
        );
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
        let atKill = 0;
        for (;;) {
          await new Promise((r) => setTimeout(r, 100));
          atKill = (await store.legacyImports()).size;
          if (atKill >= 100 || child.exitCode !== null) break;
        }
        child.kill('SIGKILL');
        await exited;
        expect(child.signalCode).toBe('SIGKILL'); // it did not finish on its own
        if (!(atKill > 0 && atKill < 1_000)) throw new Error(`killed at ${atKill} rows; stderr: ${stderr}`);

        const report = await importFile(big.file, store);
        expect(report.summary.imported + report.summary.already_there).toBe(1_000);
        expect(report.summary.already_there).toBeGreaterThanOrEqual(atKill);
        const items = await tableItems(aws, table);
        expect(items.download).toHaveLength(1_000);
        expect(new Set(items.download.map((d) => d.id))).toEqual(new Set(Object.values(report.ids)));
        expect(items['legacy-id']).toHaveLength(1_000);
        expectOldIdOrder(report.ids);

        // The CLI once more, as an operator runs it: the summary, and the JSON report with the old → new id map.
        const reportFile = path.join(path.dirname(big.file), 'report.json');
        const cli = await runCli(['--sqlite', big.file, '--report', reportFile], table);
        expect(cli.code).toBe(0);
        expect(cli.stdout).toMatch(
          /: 1000 rows\n {2}imported {7}0\n {2}already there {2}1000\n {2}conflicts {6}0\n {2}bad rows {7}0\n/,
        );
        expect(JSON.parse(fs.readFileSync(reportFile, 'utf8'))).toMatchObject({
          table,
          dry_run: false,
          ids: report.ids,
          summary: { already_there: 1_000 },
        });
        expect(cli.stderr).toMatch(/1000\/1000 rows 100%/); // plain progress lines: stderr is not a terminal here
        const missing = await runCli(['--sqlite', path.join(path.dirname(big.file), 'nope.db')], table);
        expect(missing).toMatchObject({ code: 2, stderr: expect.stringMatching(/nope\.db: no such file/) });
      } finally {
        big.remove();
      }
    }));

  it('the closing check: a clean import passes (a conflict and a later move explained), each inconsistency planted in DynamoDB fails it, named (CLI exit 3)', () =>
    withTable(async (store, table) => {
      const shared = hex(20);
      const t = (sec: number) => sqliteTime(BASE + sec * 1000);
      const { file, remove } = legacyFile([
        /* 1 */ { infohash: hex(20), state: 'completed', name: 'one', created_at: t(1) },
        /* 2 */ { infohash: hex(20), state: 'downloading', name: 'two', created_at: t(2) },
        /* 3 */ { infohash: shared, state: 'queued', name: 'three', created_at: t(3) },
        /* 4 */ { infohash: shared, state: 'paused', name: 'four', created_at: t(4), idempotency_key: null },
        /* 5 */ { infohash: hex(20), state: 'stuck', name: 'five', created_at: t(5) },
        /* 6 */ { infohash: hex(20), state: 'cancelled', name: 'six', created_at: t(6) },
        /* 7 */ { infohash: 'not a hash', state: 'completed' },
      ]);
      try {
        const clean = await runCli(['--sqlite', file], table);
        expect(clean.code).toBe(0);
        expect(clean.stdout).toMatch(
          /consistency check against .+: 6 of 6 good rows in the table \(1 bad or repeated rows/,
        );
        expect(clean.stdout).toContain(stateLine('queued', 1, 1, '', '', ''));
        expect(clean.stdout).toContain(stateLine('paused', 1, 0, -1, '', ''));
        expect(clean.stdout).toContain(stateLine('failed', 0, 1, '+1', '', ''));
        expect(clean.stdout).toMatch(/ 3 infohashes of active rows, active downloads and guards checked/);
        expect(clean.stdout).toMatch(/\nconsistency check: OK\n$/);
        // Node 24's node:sqlite prints no ExperimentalWarning: the operator sees progress and the check only.
        expect(clean.stderr).not.toMatch(/warning/i);
        const ids = Object.fromEntries(
          ((await tableItems(aws, table))['legacy-id'] ?? []).map((i) => [i.legacy_id, i.download_id as string]),
        );

        // The service moves a download on: a new revision, explained as a change.
        await store.setDownloadState(ids['2'], 'downloading', 'completed');
        const legacy = openLegacyFile(file);
        const moved = await checkLegacyImport(legacy.rows(), store).finally(() => legacy.close());
        expect(moved).toMatchObject({ ok: true, changed: 1, conflicts: 1 });

        // Writes behind the store, as a hand edit or another tool could make them.
        const item = (await aws.documents.send(new ScanCommand({ TableName: table }))).Items!;
        const download5 = item.find((i) => i.id === ids['5'])!;
        await aws.documents.send(
          new UpdateCommand({
            TableName: table,
            Key: downloadKey(ids['1']),
            UpdateExpression: 'SET #s = :s',
            ExpressionAttributeNames: { '#s': 'state' },
            ExpressionAttributeValues: { ':s': 'failed' },
          }),
        );
        await aws.documents.send(
          new DeleteCommand({ TableName: table, Key: guardKey(download5.infohashes[0].infohash) }),
        );
        const intruder = { ...(await store.get(ids['3']))!, id: '01kb0000000000000000000000', name: 'intruder' };
        await aws.documents.send(new PutCommand({ TableName: table, Item: downloadToItem(intruder) }));
        await aws.documents.send(
          new PutCommand({
            TableName: table,
            Item: membershipItem(intruder.infohashes[0], intruder.id, intruder.created_at),
          }),
        );
        await aws.documents.send(new PutCommand({ TableName: table, Item: legacyIdItem('99', ids['6']) }));

        const reportFile = path.join(path.dirname(file), 'report.json');
        const planted = await runCli(['--sqlite', file, '--report', reportFile], table);
        expect(planted.code).toBe(3);
        const problems = planted.stdout.split('\n').filter((l) => l.startsWith('problem: '));
        expect(problems.sort()).toEqual(
          [
            `problem: legacy id 1 → ${ids['1']}, unchanged since the import (revision 1), differs from its row: state completed in the file, failed in the table`,
            `problem: legacy id 99 → ${ids['6']} is in the table but is not a good row of this file (another installation's import, or a row changed since)`,
            `problem: legacy ids 6 and 99 both map to download ${ids['6']}`,
            `problem: infohash ${download5.infohashes[0].infohash}: active download ${ids['5']} (legacy id 5) holds it without a guard`,
            `problem: infohash ${shared}: 2 active downloads: ${ids['3']} (legacy id 3) queued, ${intruder.id} queued`,
          ].sort(),
        );
        // Row 1 left completed behind the store; row 2 left downloading through it.
        expect(planted.stdout).toContain(stateLine('completed', 1, 1, '', '+1', -1));
        expect(planted.stdout).toContain(stateLine('failed', 0, 2, '+1', '', '+1'));
        expect(planted.stdout).toContain(stateLine('downloading', 1, 0, '', -1, ''));
        expect(planted.stdout).toMatch(/\nconsistency check: FAILED, 5 problems \(listed above\)\n/);
        const saved = JSON.parse(fs.readFileSync(reportFile, 'utf8'));
        expect(saved.check).toMatchObject({
          ok: false,
          problems: expect.arrayContaining([expect.objectContaining({ kind: 'two-active', infohash: shared })]),
        });
        expect(Object.keys(saved.ids)).toHaveLength(6);

        // A legacy-id item lost: the row reads as not imported (a re-run would try it again).
        await aws.documents.send(new DeleteCommand({ TableName: table, Key: legacyIdKey('4') }));
        const again = openLegacyFile(file);
        const lost = await checkLegacyImport(again.rows(), store).finally(() => again.close());
        expect(lost.problems.filter((p) => p.kind === 'not-imported')).toEqual([
          {
            kind: 'not-imported',
            legacy_id: '4',
            detail: 'legacy id 4 (paused) was not imported: no legacy-id item (a re-run imports it)',
          },
        ]);
        expect(lost.states.find((s) => s.state === 'failed')).toMatchObject({ file: 0, unexplained: 1 });
      } finally {
        remove();
      }
    }));
});
