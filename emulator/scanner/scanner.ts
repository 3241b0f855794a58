import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DEFAULT_DIRS, HotFolderDirs, LocalHotFolder } from '../../lib/scan/hotfolder';

/**
 * The scanning system's emulator, working through LocalHotFolder (so it
 * honours the same folder-name settings as the gateway). For each
 * `<uuid>_<stem>.<ext>` in Input/ it answers with the fixtures `<stem>.json`
 * and `<stem>_*.json` (never `<stem>*`: aep_3 must not take aep_30), each with
 * `file_uid = <uuid>`, written into a temp folder and renamed to
 * Output/<uuid>/ whole. No fixture → one INVALID_DOCUMENT answer naming the
 * file as the core sent it (no uuid prefix) in the design's words,
 * `<name>: нет эталонного ответа в фикстурах`, `data_ocr: []`; a broken fixture
 * → INVALID_DOCUMENT naming it. The input is then renamed `.done`; dot-files
 * and `.done` are ignored. One pass is `scanOnce`; its delay is paid once per
 * pass, not per file. A missing Input/ is an empty pass. An Output/<uuid>/
 * that already exists is never overwritten, and never wedges the pass: the
 * input is marked done and a warning logged.
 */

export interface ScannerOptions {
  root: string;
  fixturesDir: string;
  delayMs?: number;
  dirs?: HotFolderDirs;
  /** `.done` inputs older than this are deleted (they are copies of users' documents). */
  doneRetentionMs?: number;
  now?: () => number;
  warn?: (event: string, fields: Record<string, unknown>) => void;
}

const INPUT = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_(.+)$/i;
const warnedFixtures = new Set<string>();

export async function scanOnce(options: ScannerOptions): Promise<string[]> {
  const folder = new LocalHotFolder(options.root, options.dirs ?? DEFAULT_DIRS);
  const warn =
    options.warn ??
    ((event, fields) => process.stderr.write(`${JSON.stringify({ level: 'warn', event, ...fields })}\n`));
  const input = folder.dir('input');
  let names: string[];
  try {
    names = (await fs.readdir(input)).sort();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return []; // nothing submitted yet
    throw err;
  }
  if (options.doneRetentionMs !== undefined)
    await cleanDone(input, names, (options.now ?? Date.now)() - options.doneRetentionMs);
  const work = names.filter((n) => !n.startsWith('.') && !n.endsWith('.done') && INPUT.test(n));
  if (work.length === 0) return [];
  if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
  const fixtures = await listFixtures(options.fixturesDir, warn);
  const output = folder.dir('output');
  await fs.mkdir(output, { recursive: true, mode: 0o700 });
  const done: string[] = [];
  for (const name of work) {
    const [, rawUuid, rest] = INPUT.exec(name)!;
    const uuid = rawUuid.toLowerCase();
    try {
      const dot = rest.lastIndexOf('.');
      const stem = dot > 0 ? rest.slice(0, dot) : rest;
      const answers = await answersFor(options.fixturesDir, fixtures, stem, rest, uuid);
      const target = path.join(output, uuid);
      if (await exists(target)) {
        warn('scanner_output_exists', { job_id: uuid, input: name });
      } else {
        const staging = path.join(output, `.staging-${uuid}-${randomBytes(4).toString('hex')}`);
        await fs.mkdir(staging);
        for (const [file, body] of answers) await fs.writeFile(path.join(staging, file), JSON.stringify(body, null, 2));
        try {
          await fs.rename(staging, target);
        } catch (err) {
          // Lost a race with another answer for the same job: the first one stands.
          await fs.rm(staging, { recursive: true, force: true });
          if (!['ENOTEMPTY', 'EEXIST'].includes((err as NodeJS.ErrnoException).code ?? '')) throw err;
          warn('scanner_output_exists', { job_id: uuid, input: name });
        }
      }
      await fs.rename(path.join(input, name), path.join(input, `${name}.done`));
      done.push(uuid);
    } catch (err) {
      // One input's failure never stops the others.
      warn('scanner_input_failed', { input: name, message: (err as Error).message });
    }
  }
  return done;
}

async function listFixtures(dir: string, warn: NonNullable<ScannerOptions['warn']>): Promise<string[]> {
  try {
    return await fs.readdir(dir);
  } catch (err) {
    if (!warnedFixtures.has(dir)) {
      warnedFixtures.add(dir);
      warn('scanner_fixtures_missing', { fixtures_dir: dir, message: (err as Error).message });
    }
    return [];
  }
}

async function answersFor(
  fixturesDir: string,
  fixtures: string[],
  stem: string,
  original: string,
  uuid: string,
): Promise<Array<[string, unknown]>> {
  const names = fixtures
    .filter((f) => f === `${stem}.json` || (f.startsWith(`${stem}_`) && f.endsWith('.json')))
    .sort();
  const invalid = (message: string) => ({ file_uid: uuid, error: { code: 'INVALID_DOCUMENT', message }, data_ocr: [] });
  if (names.length === 0) return [[`${stem}.json`, invalid(`${original}: нет эталонного ответа в фикстурах`)]];
  const answers: Array<[string, unknown]> = [];
  for (const file of names) {
    try {
      const body = JSON.parse(await fs.readFile(path.join(fixturesDir, file), 'utf8')) as Record<string, unknown>;
      answers.push([file, { ...body, file_uid: uuid }]);
    } catch {
      answers.push([file, invalid(`fixture ${file} is broken`)]);
    }
  }
  return answers;
}

async function cleanDone(input: string, names: string[], olderThan: number): Promise<void> {
  for (const name of names.filter((n) => n.endsWith('.done'))) {
    const file = path.join(input, name);
    const stat = await fs.stat(file).catch(() => undefined);
    if (stat && stat.mtimeMs < olderThan) await fs.rm(file, { force: true });
  }
}

function exists(p: string): Promise<boolean> {
  return fs.stat(p).then(
    () => true,
    () => false,
  );
}
