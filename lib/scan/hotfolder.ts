import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { validateName } from '../names';

/**
 * The hot folder of the scanning system (DESIGN §4): we drop `Input/<name>`,
 * it answers with JSON files in `Output/<job_id>/`. `put` writes in `Tmp/`
 * (same share, created on first write) and renames into `Input/`, so the
 * scanner never sees a partial file.
 */

export interface AnswerFile {
  name: string;
  size: number;
  read(): Promise<Buffer>;
}

export interface HotFolder {
  put(name: string, bytes: Buffer): Promise<void>;
  /** The job's answer files (`*.json`), or null while its Output folder does not exist. */
  poll(jobId: string): Promise<AnswerFile[] | null>;
  healthy(): Promise<boolean>;
}

export interface HotFolderDirs {
  input: string;
  output: string;
  tmp: string;
}

export const DEFAULT_DIRS: HotFolderDirs = { input: 'Input', output: 'Output', tmp: 'Tmp' };

export class HotFolderUnavailableError extends Error {
  readonly code = 'HOT_FOLDER_UNAVAILABLE';
  constructor(reason: string) {
    super(`hot folder unavailable: ${reason}`);
    this.name = 'HotFolderUnavailableError';
  }
}

export class LocalHotFolder implements HotFolder {
  constructor(
    readonly root: string,
    private readonly dirs: HotFolderDirs = DEFAULT_DIRS,
  ) {}

  async put(name: string, bytes: Buffer): Promise<void> {
    validateName(name);
    const input = path.join(this.root, this.dirs.input);
    // Input/ belongs to the scanning system: if it is gone, the share is not the one we know.
    if (!(await isDirectory(input))) throw new HotFolderUnavailableError(`${this.dirs.input}/ is missing under ${this.root}`);
    const tmp = path.join(this.root, this.dirs.tmp);
    await fs.mkdir(tmp, { recursive: true });
    const partial = path.join(tmp, `${name}.${randomBytes(6).toString('hex')}.part`);
    try {
      await fs.writeFile(partial, bytes, { flag: 'wx' });
      await fs.rename(partial, path.join(input, name));
    } catch (err) {
      await fs.rm(partial, { force: true });
      throw new HotFolderUnavailableError((err as Error).message);
    }
  }

  async poll(jobId: string): Promise<AnswerFile[] | null> {
    validateName(jobId);
    const dir = path.join(this.root, this.dirs.output, jobId);
    let entries: string[];
    try {
      entries = await fs.readdir(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new HotFolderUnavailableError((err as Error).message);
    }
    const answers: AnswerFile[] = [];
    for (const name of entries.filter((n) => n.toLowerCase().endsWith('.json') && !n.startsWith('.')).sort()) {
      const file = path.join(dir, name);
      const stat = await fs.stat(file).catch(() => undefined);
      if (stat?.isFile()) answers.push({ name, size: stat.size, read: () => fs.readFile(file) });
    }
    return answers;
  }

  async healthy(): Promise<boolean> {
    return isDirectory(path.join(this.root, this.dirs.input));
  }
}

async function isDirectory(dir: string): Promise<boolean> {
  return fs.stat(dir).then((s) => s.isDirectory(), () => false);
}
