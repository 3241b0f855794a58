import fs from 'node:fs';
import { DatabaseSync } from 'node:sqlite';
import type { LegacyRow } from '../../lib/downloads/legacy';

/**
 * Reads a legacy installation's `download` table, read-only, in the order of
 * the old id. Only `id`, `infohash` and `state` are required; the other
 * columns are read when the table has them.
 */

const REQUIRED = ['id', 'infohash', 'state'] as const;
const OPTIONAL = ['name', 'created_at', 'updated_at', 'source_added_at'] as const;

export class LegacyFileError extends Error {
  readonly code = 'LEGACY_FILE';
  constructor(message: string) {
    super(message);
    this.name = 'LegacyFileError';
  }
}

export interface LegacyFile {
  total: number;
  rows(): Iterable<LegacyRow>;
  close(): void;
}

export function openLegacyFile(file: string): LegacyFile {
  if (!fs.existsSync(file)) throw new LegacyFileError(`${file}: no such file`);
  let db: DatabaseSync;
  try {
    db = new DatabaseSync(file, { readOnly: true });
    db.prepare('PRAGMA schema_version').get(); // a file that is not SQLite fails here, not half way
  } catch (err) {
    throw new LegacyFileError(`${file}: not a readable SQLite database (${(err as Error).message})`);
  }
  try {
    const columns = new Set(
      (db.prepare(`PRAGMA table_info("download")`).all() as Array<{ name: string }>).map((c) => c.name.toLowerCase()),
    );
    if (columns.size === 0) throw new LegacyFileError(`${file}: no table "download"`);
    const missing = REQUIRED.filter((c) => !columns.has(c));
    if (missing.length) throw new LegacyFileError(`${file}: table "download" lacks ${missing.join(', ')}`);
    // Column names come from the fixed lists above, never from the file.
    const selected = [...REQUIRED, ...OPTIONAL.filter((c) => columns.has(c))].map((c) => `"${c}"`).join(', ');
    const withRowid = hasRowid(db);
    const statement = db.prepare(
      `SELECT ${selected}${withRowid ? ', rowid AS "rowid"' : ''} FROM "download" ORDER BY "id"`,
    );
    // 64-bit ids arrive as bigint: an id past 2^53 must not be rounded onto another row's.
    statement.setReadBigInts(true);
    const total = Number((db.prepare(`SELECT count(*) AS n FROM "download"`).get() as { n: number }).n);
    return {
      total,
      rows: () => statement.iterate() as Iterable<unknown> as Iterable<LegacyRow>,
      close: () => db.close(),
    };
  } catch (err) {
    db.close();
    throw err;
  }
}

function hasRowid(db: DatabaseSync): boolean {
  try {
    db.prepare(`SELECT rowid FROM "download" LIMIT 0`);
    return true;
  } catch {
    return false; // a WITHOUT ROWID table
  }
}
