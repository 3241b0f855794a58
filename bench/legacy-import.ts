import { BatchWriteCommand, BatchWriteCommandInput, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { DynamoDownloadStore } from '../lib/downloads/dynamodb-store';
import { importLegacyDownloads } from '../lib/downloads/legacy';
import { openLegacyFile } from '../tools/cli/legacy-sqlite';
import { BenchStack, report, Row, throughput } from './support';

/**
 * Legacy import rate (rows/s): the import (each row's legacy-id item, download,
 * membership [+ guard], all conditional, 25 rows to a transaction) against a
 * plain BatchWriteItem (25 items a call, no conditions) of the very items the
 * import wrote, read back from the table, re-keyed, same concurrency, same run.
 */
export async function legacyImport(bench: BenchStack, rows = 3000, concurrency = 4): Promise<Row[]> {
  const table = bench.config.tables.downloads;
  const store = new DynamoDownloadStore({ documents: bench.aws.documents, table });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-legacy-'));
  try {
    const makeFile = (name: string, firstId: number, count: number, firstSecond: number) => {
      const file = path.join(dir, name);
      const db = new DatabaseSync(file);
      db.exec(
        `CREATE TABLE download (id INTEGER PRIMARY KEY AUTOINCREMENT, infohash TEXT, state TEXT, name TEXT, created_at TEXT)`,
      );
      const insert = db.prepare(
        `INSERT INTO download (id, infohash, state, name, created_at) VALUES (?, ?, ?, ?, datetime(?, 'unixepoch'))`,
      );
      db.exec('BEGIN');
      for (let i = 0; i < count; i++)
        insert.run(
          firstId + i,
          randomBytes(20).toString('hex'),
          i % 10 === 0 ? 'downloading' : 'completed',
          `row ${i}`,
          firstSecond + Math.floor(i / 8),
        );
      db.exec('COMMIT');
      db.close();
      return file;
    };
    // Warm-up (the emulator's JIT), with old ids and seconds of its own: legacy ids are per table, and
    // two files with rows in one second mint the same ULIDs (docs/decisions.md, 96).
    const warm = openLegacyFile(makeFile('warm.db', 1_000_000, 300, 1.5e9));
    await importLegacyDownloads(warm.rows(), { store, concurrency });
    warm.close();
    const file = makeFile('legacy.db', 1, rows, 1.6e9);

    const legacy = openLegacyFile(file);
    const began = process.hrtime.bigint();
    const result = await importLegacyDownloads(legacy.rows(), { store, concurrency });
    const importRate = rows / (Number(process.hrtime.bigint() - began) / 1e9);
    legacy.close();
    if (result.summary.imported !== rows)
      throw new Error(
        `bench import wrote ${result.summary.imported} of ${rows} rows: ${JSON.stringify(result.summary)}`,
      );

    // The same items, re-keyed so they land beside the imported ones instead of over them.
    const items: Record<string, unknown>[] = [];
    let ExclusiveStartKey: Record<string, unknown> | undefined;
    do {
      const page = await bench.aws.documents.send(new ScanCommand({ TableName: table, ExclusiveStartKey }));
      items.push(
        ...(page.Items ?? []).filter(
          (i) =>
            ['legacy-id', 'download', 'membership', 'guard'].includes(i.entity as string) &&
            Object.values(result.ids).includes((i.download_id ?? i.id) as string),
        ),
      );
      ExclusiveStartKey = page.LastEvaluatedKey;
    } while (ExclusiveStartKey);
    const batches: Record<string, unknown>[][] = [];
    for (let i = 0; i < items.length; i += 25)
      batches.push(items.slice(i, i + 25).map((item) => ({ ...item, PK: `BENCH#${item.PK}` })));
    const batchRate = await throughput(batches.length, concurrency, async (i) => {
      let request: BatchWriteCommandInput['RequestItems'] = {
        [table]: batches[i].map((Item) => ({ PutRequest: { Item } })),
      };
      while (request && Object.keys(request).length)
        request = (await bench.aws.documents.send(new BatchWriteCommand({ RequestItems: request }))).UnprocessedItems;
    });
    const perRow = items.length / rows;
    return [
      {
        name: 'BatchWriteItem of the same items',
        opsPerSecond: (batchRate * 25) / perRow,
        note: `${perRow.toFixed(2)} items per row, 25 a call`,
      },
      {
        name: 'legacy import (guarded, per row)',
        opsPerSecond: importRate,
        note: `batches of 32 rows, ${concurrency} in flight`,
      },
    ];
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export function reportLegacyImport(rows: Row[]): void {
  report('Legacy import on DynamoDB Local: rows/s vs a plain BatchWriteItem of the same items', rows);
}
