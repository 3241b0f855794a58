import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { DEFAULT_DIRS, HotFolderDirs } from '../../lib/scan/hotfolder';

/**
 * The scanning system's emulator (DESIGN §4), over a local hot folder. For
 * each `<uuid>_<stem>.<ext>` in Input/ it answers with the fixtures
 * `<stem>.json` and `<stem>_*.json` (never `<stem>*`: aep_3 must not take
 * aep_30), each with `file_uid = <uuid>`, written into a temp folder and
 * renamed to Output/<uuid>/ whole. No fixture → one INVALID_DOCUMENT answer;
 * a broken fixture → INVALID_DOCUMENT naming it. The input is then renamed
 * `.done`; dot-files and `.done` are ignored. One pass is `scanOnce`.
 */

export interface ScannerOptions {
  root: string;
  fixturesDir: string;
  delayMs?: number;
  dirs?: HotFolderDirs;
}

const INPUT = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})_(.+)$/i;

export async function scanOnce(options: ScannerOptions): Promise<string[]> {
  const dirs = options.dirs ?? DEFAULT_DIRS;
  const input = path.join(options.root, dirs.input);
  const output = path.join(options.root, dirs.output);
  const done: string[] = [];
  for (const name of (await fs.readdir(input)).sort()) {
    if (name.startsWith('.') || name.endsWith('.done')) continue;
    const match = INPUT.exec(name);
    if (!match) continue;
    const [, uuid, rest] = match;
    const dot = rest.lastIndexOf('.');
    const stem = dot > 0 ? rest.slice(0, dot) : rest;
    if (options.delayMs) await new Promise((r) => setTimeout(r, options.delayMs));
    const answers = await answersFor(options.fixturesDir, stem, uuid.toLowerCase());

    await fs.mkdir(output, { recursive: true });
    const staging = path.join(output, `.staging-${uuid}-${randomBytes(4).toString('hex')}`);
    await fs.mkdir(staging);
    for (const [file, body] of answers) await fs.writeFile(path.join(staging, file), JSON.stringify(body, null, 2));
    await fs.rename(staging, path.join(output, uuid.toLowerCase()));
    await fs.rename(path.join(input, name), path.join(input, `${name}.done`));
    done.push(uuid.toLowerCase());
  }
  return done;
}

async function answersFor(fixturesDir: string, stem: string, uuid: string): Promise<Array<[string, unknown]>> {
  const names = (await fs.readdir(fixturesDir)).filter((f) => f === `${stem}.json` || (f.startsWith(`${stem}_`) && f.endsWith('.json'))).sort();
  const invalid = (message: string) => ({ file_uid: uuid, error: { code: 'INVALID_DOCUMENT', message }, data_ocr: null });
  if (names.length === 0) return [[`${stem}.json`, invalid(`no recognisable document in ${stem}`)]];
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
