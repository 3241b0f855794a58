import { constants, promises as fs, Stats } from 'node:fs';
import path from 'node:path';
import { AnswerNotReadyError, AnswerRefusedError, answerTooLarge } from './errors';

/**
 * An answer file of a local hot folder, read without following any link (decision 390). The scanning system
 * (or whoever else can write into Output/) is not trusted with the gateway's own files: a link there would
 * otherwise hand the gateway's process its key ring, `.stack/env` or `/proc/self/environ` as an "answer".
 *
 * - the job's folder and Output/ are checked with lstat: a link there is refused, never listed through;
 * - each file is opened O_NOFOLLOW (a link raced in after the listing fails the open) and O_NONBLOCK (a FIFO
 *   never hangs the open), then checked on the open descriptor: a regular file, one link (a hard link to a file
 *   elsewhere is refused), and resolved (through /proc/self/fd) to exactly `<job folder>/<name>`;
 * - a file over `maxBytes` is refused unread; one that grows while read is not settled yet (read at the next poll).
 */

/** The job's folder, after checking that neither it nor Output/ is a link; null while it does not exist. */
export async function jobFolder(realRoot: string, outputDir: string, jobId: string): Promise<string | null> {
  let folder = realRoot;
  for (const part of [outputDir, jobId]) {
    folder = path.join(folder, part);
    let stat: Stats;
    try {
      stat = await fs.lstat(folder);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    if (stat.isSymbolicLink()) throw new AnswerRefusedError(`${path.relative(realRoot, folder)} is a symbolic link`);
    // Not a folder: a failed poll (the hot folder's fault, retried until the deadline), as the old readdir's ENOTDIR.
    if (!stat.isDirectory()) throw Object.assign(new Error(`${folder} is not a folder`), { code: 'ENOTDIR' });
  }
  return folder;
}

/** What an entry of the job's folder is: an answer to read, something to refuse, or nothing (a folder). */
export function entryKind(stat: Stats): 'file' | 'refused' | 'skipped' {
  if (stat.isFile()) return 'file';
  return stat.isDirectory() ? 'skipped' : 'refused';
}

/** Why a listed entry that is not a regular file is refused. */
export function refusalOf(name: string, stat: Stats): AnswerRefusedError {
  return new AnswerRefusedError(`${name} is ${stat.isSymbolicLink() ? 'a symbolic link' : 'not a regular file'}`);
}

export async function readAnswerFile(folder: string, name: string, maxBytes: number): Promise<Buffer> {
  const file = path.join(folder, name);
  let handle: fs.FileHandle;
  try {
    handle = await fs.open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    // ELOOP: the entry became a link after the listing (O_NOFOLLOW refuses to open it).
    if ((err as NodeJS.ErrnoException).code === 'ELOOP') throw new AnswerRefusedError(`${name} is a symbolic link`);
    throw err;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) throw new AnswerRefusedError(`${name} is not a regular file`);
    if (stat.nlink > 1) throw new AnswerRefusedError(`${name} has ${stat.nlink} hard links`);
    if (!(await opensInside(handle, file, stat)))
      throw new AnswerRefusedError(`${name} is not inside its job's folder`);
    if (stat.size > maxBytes) throw answerTooLarge(name, stat.size, maxBytes);
    return await readSize(handle, name, stat.size);
  } finally {
    await handle.close();
  }
}

/**
 * The open file is the one at `file` (no link in its folders, checked after the open): where the descriptor
 * resolves to on Linux; elsewhere, the path's own lstat names the same inode.
 */
async function opensInside(handle: fs.FileHandle, file: string, stat: Stats): Promise<boolean> {
  const resolved = await fs.readlink(`/proc/self/fd/${handle.fd}`).catch(() => undefined);
  if (resolved !== undefined) return resolved === file;
  const there = await fs.lstat(file).catch(() => undefined);
  return there !== undefined && there.dev === stat.dev && there.ino === stat.ino;
}

/** The file's `size` bytes in one buffer; a byte past them means a writer is still at it: not settled yet. */
async function readSize(handle: fs.FileHandle, name: string, size: number): Promise<Buffer> {
  const bytes = Buffer.allocUnsafe(size + 1);
  let total = 0;
  while (total <= size) {
    const { bytesRead } = await handle.read(bytes, total, size + 1 - total, null);
    if (bytesRead === 0) break;
    total += bytesRead;
  }
  if (total > size) throw new AnswerNotReadyError(`${name} grew while it was read`);
  return bytes.subarray(0, total);
}
