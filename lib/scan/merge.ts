import { AnswerNotReadyError, AnswerRefusedError, answerTooLarge } from './errors';
import type { AnswerFile } from './hotfolder';

/** The raw answer of a job: every file of the set, each parsed on its own, sorted by name. */
export interface MergedFile {
  name: string;
  response: unknown | null;
  parse_error: string | null;
}

export interface Merged {
  job_id: string;
  files: MergedFile[];
}

/** How much of an answer set the gateway reads (SCAN_MAX_ANSWER_*: lib/scan/config.ts). */
export interface AnswerBounds {
  /** Bytes of any one file. */
  fileBytes: number;
  /** Files in one set. */
  files: number;
  /** Bytes of the whole set. */
  setBytes: number;
}

const MIB = 1024 * 1024;
/** The defaults of SCAN_MAX_ANSWER_BYTES, SCAN_MAX_ANSWER_FILES, SCAN_MAX_ANSWER_SET_BYTES. */
export const DEFAULT_ANSWER_BOUNDS: AnswerBounds = { fileBytes: 4 * MIB, files: 100, setBytes: 8 * MIB };
/**
 * No bound may go past this (config.ts). Merged, stringified and normalised, a set held 8 to 10 times its size
 * (measured, docs/scan.md "Bounds": 16 MiB of answers peaked at 117–158 MiB), and the scan functions have 256 MB.
 */
export const MAX_ANSWER_SET_BYTES = 16 * MIB;

/**
 * The set checked against its bounds on the listed sizes BEFORE any file is read (a set over them is refused
 * whole, unread: AnswerRefusedError), then each file read with the per-file bound and parsed. A file longer than
 * listed is still being written (not settled: read at the next poll), so the set never holds more than its bound.
 */
export async function mergeAnswers(jobId: string, files: AnswerFile[], bounds: AnswerBounds): Promise<Merged> {
  checkBounds(files, bounds);
  const merged: MergedFile[] = [];
  for (const file of [...files].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const bytes = await file.read(bounds.fileBytes);
    // Grown since it was listed: its writer is still at it (and the set's bound was checked on the listed sizes).
    if (bytes.length > file.size) throw new AnswerNotReadyError(`${file.name} grew since it was listed`);
    const text = bytes.toString('utf8');
    try {
      merged.push({ name: file.name, response: JSON.parse(text), parse_error: null });
    } catch (err) {
      merged.push({ name: file.name, response: null, parse_error: (err as Error).message });
    }
  }
  return { job_id: jobId, files: merged };
}

export function checkBounds(files: Pick<AnswerFile, 'name' | 'size'>[], bounds: AnswerBounds): void {
  if (files.length > bounds.files)
    throw new AnswerRefusedError(
      `${files.length} files, more than the ${bounds.files} allowed (SCAN_MAX_ANSWER_FILES)`,
    );
  const large = files.find((f) => f.size > bounds.fileBytes);
  if (large) throw answerTooLarge(large.name, large.size, bounds.fileBytes);
  const total = files.reduce((n, f) => n + f.size, 0);
  if (total > bounds.setBytes)
    throw new AnswerRefusedError(
      `the set has ${total} bytes, more than the ${bounds.setBytes} allowed (SCAN_MAX_ANSWER_SET_BYTES)`,
    );
}
