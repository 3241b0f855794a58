import { randomBytes } from 'node:crypto';
import { constants, FSWatcher, promises as fs, watch } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { inboxName, MAX_INBOX_NAME_BYTES, validateName } from '../names';
import { ChangeSignal, WakeMode } from './change-signal';
import { AnswerRefusedError, HotFolderUnavailableError } from './errors';
import { entryKind, jobFolder, readAnswerFile, refusalOf } from './local-read';

export { AnswerNotReadyError, AnswerRefusedError, HotFolderUnavailableError } from './errors';

/**
 * The hot folder of the scanning system: we drop `Input/<name>`, it answers
 * with JSON files in `Output/<job_id>/`. `put` writes in `Tmp/` (same share)
 * and renames into `Input/`, so the scanner never sees a partial file.
 *
 * Folders: `put` creates `Input/` and `Tmp/` when missing (private, 0700);
 * only a missing ROOT means the share is not there ("hot folder unavailable").
 */

export interface AnswerFile {
  name: string;
  size: number;
  /**
   * The file's bytes. Throws AnswerNotReadyError while the scanning system still holds the file, and
   * AnswerRefusedError for a file never to be read (a link, not a regular file, more than `maxBytes`).
   */
  read(maxBytes: number): Promise<Buffer>;
}

export interface HotFolder {
  /** The file's bytes, or a stream of them (read to its end here; the caller destroys it if `put` fails). */
  put(name: string, bytes: Buffer | Readable): Promise<void>;
  /** The job's answer files (`*.json`), or null while its Output folder does not exist. */
  poll(jobId: string): Promise<AnswerFile[] | null>;
  /** The root exists and can be read. */
  healthy(): Promise<boolean>;
  /**
   * Resolves when something may have changed under Output/, or after
   * `timeoutMs` at the latest: lets a poll loop wake when an answer lands
   * instead of a full poll interval later. Optional: without it, loops sleep.
   */
  changed?(timeoutMs: number): Promise<void>;
  /** What wakes `changed` now (the health check says it): the folder's change reports, or only the timeout. */
  wakeMode?(): WakeMode;
}

export interface HotFolderDirs {
  input: string;
  output: string;
  tmp: string;
}

export const DEFAULT_DIRS: HotFolderDirs = { input: 'Input', output: 'Output', tmp: 'Tmp' };

/** `put` appends `.<12 hex>.part` to the name in Tmp/. */
export const PART_SUFFIX_BYTES = '.'.length + 12 + '.part'.length;
const partName = (name: string) => `${name}.${randomBytes(6).toString('hex')}.part`;

/**
 * The inbox name of a job's file, shortened so that the LONGEST name we
 * write — the temp name in Tmp/ — fits MAX_INBOX_NAME_BYTES, not just the final one.
 */
export function hotFolderName(jobId: string, originalName: string): string {
  return inboxName(jobId, originalName, MAX_INBOX_NAME_BYTES - PART_SUFFIX_BYTES);
}

export class LocalHotFolder implements HotFolder {
  constructor(
    readonly root: string,
    readonly dirs: HotFolderDirs = DEFAULT_DIRS,
  ) {}

  /** The absolute path of one of the folders (for the scanner side, which works through this class too). */
  dir(kind: keyof HotFolderDirs): string {
    return path.join(this.root, this.dirs[kind]);
  }

  async put(name: string, bytes: Buffer | Readable): Promise<void> {
    validateName(name);
    if (!(await isDirectory(this.root))) throw new HotFolderUnavailableError(`${this.root} is missing`);
    const partial = path.join(this.dir('tmp'), partName(name));
    try {
      await fs.mkdir(this.dir('input'), { recursive: true, mode: 0o700 });
      await fs.mkdir(this.dir('tmp'), { recursive: true, mode: 0o700 });
      await fs.writeFile(partial, bytes, { flag: 'wx', mode: 0o600 });
      await fs.rename(partial, path.join(this.dir('input'), name));
    } catch (err) {
      await fs.rm(partial, { force: true });
      throw new HotFolderUnavailableError((err as Error).message);
    }
  }

  async poll(jobId: string): Promise<AnswerFile[] | null> {
    validateName(jobId);
    let dir: string | null;
    let entries: string[] = [];
    try {
      // The root as configured may pass through links (it is ours); below it, nothing is followed (local-read.ts).
      dir = await jobFolder(await fs.realpath(this.root), this.dirs.output, jobId);
      entries = dir === null ? [] : await fs.readdir(dir);
    } catch (err) {
      if (err instanceof AnswerRefusedError) throw err;
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw new HotFolderUnavailableError((err as Error).message);
      dir = null;
    }
    if (dir === null) {
      // No answer yet — unless the share itself is gone, which must not pass for "waiting".
      if (!(await isDirectory(this.root))) throw new HotFolderUnavailableError(`${this.root} is missing`);
      return null;
    }
    const folder = dir;
    const answers: AnswerFile[] = [];
    for (const name of entries.filter((n) => n.toLowerCase().endsWith('.json') && !n.startsWith('.')).sort()) {
      const stat = await fs.lstat(path.join(folder, name)).catch(() => undefined);
      const kind = stat ? entryKind(stat) : 'skipped';
      // A link or a special file is listed (the job ends refused, never waits in silence) but never opened.
      if (kind === 'file') answers.push({ name, size: stat!.size, read: (max) => readAnswerFile(folder, name, max) });
      if (kind === 'refused')
        answers.push({ name, size: stat!.size, read: () => Promise.reject(refusalOf(name, stat!)) });
    }
    return answers;
  }

  async healthy(): Promise<boolean> {
    if (!(await isDirectory(this.root))) return false;
    return fs.access(this.root, constants.R_OK | constants.X_OK).then(
      () => true,
      () => false,
    );
  }

  /**
   * One watcher for the folder's life, not one per wait: every event is counted (change-signal.ts), so a change
   * that lands while a pass runs makes the next wait return at once.
   */
  changed(timeoutMs: number): Promise<void> {
    this.watch();
    return this.signal.wait(timeoutMs);
  }

  /** `notify` while a watcher is on Output/ or on the root (until Output/ exists), else `poll`. */
  wakeMode(): WakeMode {
    return this.watching ? 'notify' : 'poll';
  }

  /** Stops watching (tests, tools); a later `changed` starts again. */
  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    this.watching = undefined;
  }

  private readonly signal = new ChangeSignal();
  private watcher?: FSWatcher;
  private watching?: 'output' | 'root';

  /** Watches Output/, or the root until Output/ exists (the scanner creates it with its first answer). */
  private watch(): void {
    if (this.watching === 'output') return;
    for (const [kind, dir] of [
      ['output', this.dir('output')],
      ['root', this.root],
    ] as const) {
      if (kind === this.watching) return; // already on the root; Output/ still missing
      let watcher: FSWatcher;
      try {
        watcher = watch(dir, { recursive: false }, () => this.bump());
      } catch {
        continue;
      }
      this.close();
      // The folder was deleted or the watch broke: count it as a change, watch again on the next wait.
      watcher.on('error', () => {
        if (this.watcher === watcher) this.close();
        this.bump();
      });
      watcher.unref(); // never keeps a process (a Lambda container, a CLI) alive
      this.watcher = watcher;
      this.watching = kind;
      if (kind === 'root') this.bump(); // Output/ may have appeared between the two tries
      return;
    }
  }

  private bump(): void {
    this.signal.bump();
  }
}

async function isDirectory(dir: string): Promise<boolean> {
  return fs.stat(dir).then(
    (s) => s.isDirectory(),
    () => false,
  );
}
