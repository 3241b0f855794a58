import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync, type SQLInputValue } from 'node:sqlite';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { AwsClients } from '../../lib/aws/clients';

/** The legacy installation's schema, as the issue gives it. */
export const LEGACY_SCHEMA = `CREATE TABLE download (
  id INTEGER PRIMARY KEY AUTOINCREMENT, infohash TEXT, idempotency_key TEXT UNIQUE, state TEXT, name TEXT,
  created_at TEXT DEFAULT (datetime('now')), updated_at TEXT, source_added_at TEXT)`;

export interface LegacyRowSpec {
  id?: number | bigint | null | string;
  infohash?: string | null;
  state?: string | null;
  name?: string | null;
  created_at?: string | null;
  updated_at?: string | null;
  source_added_at?: string | null;
  idempotency_key?: string | null;
}

const ACTIVE = new Set(['queued', 'downloading', 'paused', 'stuck']);

/** A legacy SQLite file with these rows (ids autoincrement unless given); `idempotency_key` as the old service wrote it. */
export function legacyFile(rows: LegacyRowSpec[], schema = LEGACY_SCHEMA): { file: string; remove: () => void } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'legacy-'));
  const file = path.join(dir, 'legacy.db');
  const db = new DatabaseSync(file);
  try {
    db.exec(schema);
    // SQLite's column names are case-insensitive: `@id` fills a column declared `ID`.
    const columns = new Set(
      (db.prepare(`PRAGMA table_info(download)`).all() as Array<{ name: string }>).map((c) => c.name.toLowerCase()),
    );
    db.exec('BEGIN');
    for (const row of rows) {
      const values: Record<string, unknown> = {
        idempotency_key: row.state && ACTIVE.has(row.state) ? row.infohash : null,
        ...row,
      };
      const names = Object.keys(values).filter((k) => columns.has(k) && values[k] !== undefined);
      db.prepare(`INSERT INTO download (${names.join(', ')}) VALUES (${names.map((n) => `@${n}`).join(', ')})`).run(
        Object.fromEntries(names.map((n) => [n, values[n] as SQLInputValue])),
      );
    }
    db.exec('COMMIT');
  } finally {
    db.close();
  }
  return { file, remove: () => fs.rmSync(dir, { recursive: true, force: true }) };
}

/** Every item of a table, by entity. */
export async function tableItems(aws: AwsClients, table: string): Promise<Record<string, Record<string, unknown>[]>> {
  const byEntity: Record<string, Record<string, unknown>[]> = {};
  let ExclusiveStartKey: Record<string, unknown> | undefined;
  do {
    const page = await aws.documents.send(new ScanCommand({ TableName: table, ExclusiveStartKey }));
    for (const item of page.Items ?? []) (byEntity[item.entity as string] ??= []).push(item);
    ExclusiveStartKey = page.LastEvaluatedKey;
  } while (ExclusiveStartKey);
  return byEntity;
}

/** SQLite's `datetime()` text for a time. */
export const sqliteTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');
