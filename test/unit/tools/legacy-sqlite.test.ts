import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { mapLegacyRow } from '../../../lib/downloads/legacy';
import { LegacyFileError, NodeSqliteMissingError, openLegacyFile } from '../../../tools/cli/legacy-sqlite';
import { legacyFile } from '../../support/legacy';

/**
 * The legacy file reader over node:sqlite: exact 64-bit ids, tables without
 * a rowid, and every way a file can be unusable, each a LegacyFileError that
 * names the file (the CLI prints it and exits 2, no stack).
 */
const H = 'c12fe1c06bba254a9dc9f519b335aa7c1367a88a';
const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

function scratch(name: string): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'legacy-reader-'));
  dirs.push(dir);
  return path.join(dir, name);
}

function read(file: string) {
  const legacy = openLegacyFile(file);
  try {
    return { total: legacy.total, rows: [...legacy.rows()] };
  } finally {
    legacy.close();
  }
}

function refusal(file: string): string {
  try {
    read(file);
  } catch (err) {
    expect(err).toBeInstanceOf(LegacyFileError);
    return (err as Error).message;
  }
  throw new Error(`${file} was read`);
}

it('reads ids past 2^53 as exact bigints, in old-id order', () => {
  const ids = [2n ** 53n + 2n, 2n ** 53n + 1n, 2n ** 53n, 2n ** 63n - 1n, 7n];
  const { file, remove } = legacyFile(ids.map((id, i) => ({ id, infohash: H.slice(0, 39) + i, state: 'completed' })));
  try {
    const { total, rows } = read(file);
    expect(total).toBe(5);
    // As doubles, 2^53 + 1 would read as 2^53: two rows on one id.
    expect(rows.map((r) => r.id)).toEqual([7n, 2n ** 53n, 2n ** 53n + 1n, 2n ** 53n + 2n, 2n ** 63n - 1n]);
    expect(rows.map((r) => mapLegacyRow(r)).map((m) => m.legacyId)).toEqual([
      '7',
      '9007199254740992',
      '9007199254740993',
      '9007199254740994',
      '9223372036854775807',
    ]);
  } finally {
    remove();
  }
});

it('reads a WITHOUT ROWID table (no rowid to point at a NULL id) and upper-case column names', () => {
  const { file, remove } = legacyFile(
    [
      { id: 2, infohash: H, state: 'queued' },
      { id: 1, infohash: H.replace('c', 'd'), state: 'completed' },
    ],
    'CREATE TABLE Download (ID INTEGER PRIMARY KEY, InfoHash TEXT, STATE TEXT, Name TEXT) WITHOUT ROWID',
  );
  try {
    const { rows } = read(file);
    expect(rows).toEqual([
      expect.objectContaining({ id: 1n, state: 'completed', name: null }),
      expect.objectContaining({ id: 2n, infohash: H, state: 'queued' }),
    ]);
    expect(rows[0]).not.toHaveProperty('rowid');
  } finally {
    remove();
  }
});

it('turns blobs and numbers where text belongs into readable reasons', () => {
  const file = scratch('typed.db');
  const db = new DatabaseSync(file);
  db.exec('CREATE TABLE download (id INTEGER PRIMARY KEY, infohash, state, name, created_at)');
  const insert = db.prepare('INSERT INTO download VALUES (?, ?, ?, ?, ?)');
  insert.run(1, Buffer.from(H, 'hex'), 'completed', 'a', null);
  insert.run(2, H, Buffer.from('queued'), 'b', null);
  insert.run(3, H, 'completed', Buffer.from('name'), 1622548800);
  db.close();
  const [one, two, three] = read(file).rows.map(mapLegacyRow);
  expect(one).toEqual({ ok: false, legacyId: '1', reason: 'infohash is not text: a 20-byte blob' });
  expect(two).toEqual({ ok: false, legacyId: '2', reason: 'unknown state a 6-byte blob' });
  expect(three).toMatchObject({
    ok: true,
    name: H,
    warnings: [
      'created_at 1622548800 is not a UTC time: the import time is used',
      'name a 4-byte blob is not text: the infohash is used',
    ],
  });
});

describe('refuses, naming the file', () => {
  it('a missing file, a directory, a file that is not SQLite', () => {
    const missing = scratch('nope.db');
    expect(refusal(missing)).toBe(`${missing}: no such file`);
    expect(refusal(path.dirname(missing))).toBe(`${path.dirname(missing)}: not a file`);
    const text = scratch('notes.txt');
    fs.writeFileSync(text, 'id,infohash,state\n1,abc,queued\n'.repeat(200));
    expect(refusal(text)).toBe(`${text}: not a readable SQLite database (file is not a database)`);
  });

  it('no download table, or one without the required columns', () => {
    const empty = scratch('empty.db');
    fs.writeFileSync(empty, '');
    expect(refusal(empty)).toBe(`${empty}: no table "download"`);
    const other = legacyFile([], 'CREATE TABLE downloads (id INTEGER, infohash TEXT, state TEXT)');
    const lacking = legacyFile([], 'CREATE TABLE download (id INTEGER, hash TEXT, status TEXT)');
    try {
      expect(refusal(other.file)).toBe(`${other.file}: no table "download"`);
      expect(refusal(lacking.file)).toBe(`${lacking.file}: table "download" lacks infohash, state`);
    } finally {
      other.remove();
      lacking.remove();
    }
  });

  it('a file corrupt at its start, and one corrupt half way through its rows (how far the reading got)', () => {
    // The last row's name spills into overflow pages, the last pages of the file: a count never reads them.
    const rows = [
      ...Array.from({ length: 2000 }, (_, i) => ({ infohash: H, state: 'completed', name: `row ${i}` })),
      { infohash: H, state: 'completed', name: 'long '.repeat(8000) },
    ];
    const { file, remove } = legacyFile(rows);
    try {
      const bytes = fs.readFileSync(file);
      const head = scratch('head.db');
      fs.writeFileSync(head, Buffer.concat([bytes.subarray(0, 100), Buffer.alloc(bytes.length - 100, 0xff)]));
      expect(refusal(head)).toBe(`${head}: not a readable SQLite database (database disk image is malformed)`);

      const tail = scratch('tail.db');
      fs.writeFileSync(tail, Buffer.from(bytes).fill(0xff, bytes.length - 2 * 4096));
      const legacy = openLegacyFile(tail); // opens and counts: the damage is in the rows
      try {
        expect(legacy.total).toBe(2001);
        expect(() => [...legacy.rows()]).toThrow(
          new LegacyFileError(
            `${tail}: unreadable after 2000 rows (the last legacy id read: 2000): database disk image is malformed`,
          ),
        );
      } finally {
        legacy.close();
      }
    } finally {
      remove();
    }
  });
});

it('a Node without node:sqlite gets a sentence naming its version and the command, not a stack', () => {
  const { file, remove } = legacyFile([{ infohash: H, state: 'queued' }]);
  const builtin = jest.spyOn(process, 'getBuiltinModule').mockReturnValue(undefined as never);
  try {
    expect(() => openLegacyFile(file)).toThrow(NodeSqliteMissingError);
    expect(() => openLegacyFile(file)).toThrow(`this is Node ${process.version}: run \`npm run import:legacy -- …\``);
  } finally {
    builtin.mockRestore();
    remove();
  }
});
