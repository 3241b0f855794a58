import fs from 'node:fs';
import type { DatabaseSync } from 'node:sqlite';
import type { LegacyRow } from '../../lib/downloads/legacy';

/**
 * Reads a legacy installation's `download` table, read-only, in the order of
 * the old id, through Node's built-in SQLite (node:sqlite: nothing to compile
 * at install). Only `id`, `infohash` and `state` are required; the other
 * columns are read when the table has them. Every failure of the file itself
 * (not SQLite, corrupt, no such table or column) is a LegacyFileError that
 * names the file, also when the corruption is met half way through the rows.
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

/** The CLI started by a Node without `node:sqlite` (older than 22.13; `npm run` puts the pinned Node 24 first). */
export class NodeSqliteMissingError extends Error {
  constructor() {
    super(
      `reading SQLite needs Node 24's node:sqlite, and this is Node ${process.version}: run \`npm run import:legacy -- …\` after \`npm ci\` (it runs the pinned Node 24)`,
    );
    this.name = 'NodeSqliteMissingError';
  }
}

/** Loaded when a file is opened, so a Node without it gets a sentence, not a stack from the import of this module. */
function sqlite(): typeof import('node:sqlite') {
  const module = process.getBuiltinModule?.('node:sqlite');
  if (!module) throw new NodeSqliteMissingError();
  return module;
}

export interface LegacyFile {
  total: number;
  /** The rows from the first, in old-id order; each call starts over (the import reads them, then its check). */
  rows(): Iterable<LegacyRow>;
  close(): void;
}

export function openLegacyFile(file: string): LegacyFile {
  const stat = fs.statSync(file, { throwIfNoEntry: false });
  if (!stat) throw new LegacyFileError(`${file}: no such file`);
  if (!stat.isFile()) throw new LegacyFileError(`${file}: not a file`);
  const { DatabaseSync: Database } = sqlite();
  let db: DatabaseSync;
  try {
    db = new Database(file, { readOnly: true });
  } catch (err) {
    throw unreadable(file, err);
  }
  try {
    db.prepare('PRAGMA schema_version').get(); // a file that is not SQLite fails here, not half way
    const columns = new Set(
      (db.prepare(`PRAGMA table_info("download")`).all() as Array<{ name: string }>).map((c) => c.name.toLowerCase()),
    );
    if (columns.size === 0) throw new LegacyFileError(`${file}: no table "download"`);
    const missing = REQUIRED.filter((c) => !columns.has(c));
    if (missing.length) throw new LegacyFileError(`${file}: table "download" lacks ${missing.join(', ')}`);
    // Column names come from the fixed lists above, never from the file; the alias keys the row in lower case
    // (SQLite names a result column as the table declares it: `ID` would not be `row.id`).
    const selected = [...REQUIRED, ...OPTIONAL.filter((c) => columns.has(c))].map((c) => `"${c}" AS "${c}"`).join(', ');
    const withRowid = hasRowid(db);
    const statement = db.prepare(
      `SELECT ${selected}${withRowid ? ', rowid AS "rowid"' : ''} FROM "download" ORDER BY "id"`,
    );
    // 64-bit ids arrive as bigint: an id past 2^53 must not be rounded onto another row's.
    statement.setReadBigInts(true);
    const total = Number((db.prepare(`SELECT count(*) AS n FROM "download"`).get() as { n: bigint | number }).n);
    return {
      total,
      rows: () => readAll(file, statement.iterate() as Iterator<unknown> as Iterator<LegacyRow>),
      close: () => db.close(),
    };
  } catch (err) {
    db.close();
    throw err instanceof LegacyFileError ? err : unreadable(file, err);
  }
}

/** A corrupt page met half way is the file's fault: say so, and how far the reading got. */
function* readAll(file: string, rows: Iterator<LegacyRow>): Generator<LegacyRow> {
  let read = 0;
  let last: unknown;
  for (;;) {
    let next: IteratorResult<LegacyRow>;
    try {
      next = rows.next();
    } catch (err) {
      const where = read ? `after ${read} rows (the last legacy id read: ${String(last)})` : 'at the first row';
      throw new LegacyFileError(`${file}: unreadable ${where}: ${(err as Error).message}`);
    }
    if (next.done) return;
    read++;
    last = next.value.id;
    yield next.value;
  }
}

function unreadable(file: string, err: unknown): LegacyFileError {
  return new LegacyFileError(`${file}: not a readable SQLite database (${(err as Error).message})`);
}

function hasRowid(db: DatabaseSync): boolean {
  try {
    db.prepare(`SELECT rowid FROM "download" LIMIT 0`);
    return true;
  } catch {
    return false; // a WITHOUT ROWID table
  }
}
