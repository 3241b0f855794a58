import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { isoTime } from '../lib/clock';
import { DynamoDownloadStore } from '../lib/downloads/dynamodb-store';
import { parseInfohash } from '../lib/downloads/infohash';
import { newId } from '../lib/ident';
import { BenchStack, report, Row, throughput } from './support';

/**
 * Ingest throughput: our guarded createDownloadIfNoActive (one 1+2n item
 * transaction; a dedup costs a cancelled transaction + read + no-op) against a
 * raw conditional PutItem on the same DynamoDB Local, and the seed's design
 * (SQLite, BEGIN IMMEDIATE, check-then-insert) as a reference.
 * "contended": 8 callers at a time on the same hash, i.e. 1 create + 7 dedups
 * (answered by the fast dedup read when this process created the download).
 */
const CONTENDERS = 8;

export async function downloadsIngest(bench: BenchStack, ops = 1600, concurrency = 8): Promise<Row[]> {
  const TableName = bench.config.tables.downloads;
  const store = new DynamoDownloadStore({ documents: bench.aws.documents, table: TableName });
  const hash = () => parseInfohash(randomBytes(20).toString('hex'));
  const pool = Array.from({ length: 2 * Math.ceil((ops + CONTENDERS) / CONTENDERS) + 2 }, hash);

  const raw = () =>
    bench.aws.dynamodb.send(
      new PutItemCommand({
        TableName,
        Item: { PK: { S: `BENCH#${newId()}` }, SK: { S: 'META' } },
        ConditionExpression: 'attribute_not_exists(PK)',
      }),
    );
  const distinct = () => store.createDownloadIfNoActive({ state: 'queued', name: 'bench' }, [hash()]);
  const contended = (i: number) =>
    store.createDownloadIfNoActive({ state: 'queued', name: 'bench' }, [pool[Math.floor(i / CONTENDERS)]]);

  await throughput(200, concurrency, raw); // warm-up
  await throughput(200, concurrency, distinct);
  // Best of two interleaved rounds: on a shared machine a burst of someone else's
  // load during one row would otherwise decide the ratio.
  const best = [0, 0, 0];
  let round = 0;
  for (let r = 0; r < 2; r++) {
    best[0] = Math.max(best[0], await throughput(ops, concurrency, raw));
    best[1] = Math.max(best[1], await throughput(ops, concurrency, distinct));
    best[2] = Math.max(best[2], await throughput(ops, concurrency, (i) => contended(i + round)));
    round += ops + CONTENDERS; // fresh hashes for the second round
  }
  const rows: Row[] = [
    { name: 'raw conditional PutItem', opsPerSecond: best[0] },
    { name: 'guarded ingest, distinct hashes', opsPerSecond: best[1] },
    {
      name: `guarded ingest, ${CONTENDERS} callers per hash`,
      opsPerSecond: best[2],
      note: `1 create + ${CONTENDERS - 1} dedups; best of 2 rounds`,
    },
  ];
  return [...rows, ...sqliteReference(ops)];
}

/** The seed's way: one SQLite file, BEGIN IMMEDIATE serialises writers, then check-then-insert. */
function sqliteReference(ops: number): Row[] {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-sqlite-'));
  const db = new DatabaseSync(path.join(dir, 'downloads.db'));
  try {
    db.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL');
    db.exec(`CREATE TABLE downloads (id TEXT PRIMARY KEY, state TEXT NOT NULL, name TEXT, created_at TEXT);
             CREATE TABLE infohashes (download_id TEXT NOT NULL, infohash TEXT NOT NULL, kind TEXT NOT NULL);
             CREATE INDEX infohashes_hash ON infohashes (infohash);`);
    const owner = db.prepare(
      `SELECT d.id FROM downloads d JOIN infohashes h ON h.download_id = d.id
       WHERE h.infohash = ? AND d.state IN ('queued','downloading','paused','stuck') LIMIT 1`,
    );
    const insertDownload = db.prepare('INSERT INTO downloads (id, state, name, created_at) VALUES (?, ?, ?, ?)');
    const insertHash = db.prepare('INSERT INTO infohashes (download_id, infohash, kind) VALUES (?, ?, ?)');
    const ingest = (infohash: string) => {
      db.exec('BEGIN IMMEDIATE');
      try {
        const found = owner.get(infohash) as { id: string } | undefined;
        if (found) return found.id;
        const id = newId();
        insertDownload.run(id, 'queued', 'bench', isoTime(Date.now()));
        insertHash.run(id, infohash, 'v1');
        return id;
      } catch (err) {
        db.exec('ROLLBACK');
        throw err;
      } finally {
        if (db.isTransaction) db.exec('COMMIT');
      }
    };
    const timed = (pick: (i: number) => string) => {
      const began = process.hrtime.bigint();
      for (let i = 0; i < ops; i++) ingest(pick(i));
      return ops / (Number(process.hrtime.bigint() - began) / 1e9);
    };
    const pool = Array.from({ length: Math.ceil(ops / CONTENDERS) + 1 }, () => randomBytes(20).toString('hex'));
    return [
      {
        name: 'SQLite BEGIN IMMEDIATE, distinct (seed)',
        opsPerSecond: timed(() => randomBytes(20).toString('hex')),
        note: 'in-process, one writer',
      },
      {
        name: `SQLite BEGIN IMMEDIATE, ${CONTENDERS} per hash (seed)`,
        opsPerSecond: timed((i) => pool[Math.floor(i / CONTENDERS)]),
        note: 'in-process, one writer',
      },
    ];
  } finally {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function reportDownloadsIngest(rows: Row[]): void {
  report('Downloads ingest on DynamoDB Local (concurrency 8), seed SQLite as reference', rows);
}
