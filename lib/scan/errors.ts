/** Typed failures of the scan domain; callers branch on the class, logs carry its name. */

/** The hot folder cannot be reached or written (share gone, root missing, I/O error). */
export class HotFolderUnavailableError extends Error {
  readonly code = 'HOT_FOLDER_UNAVAILABLE';
  constructor(reason: string) {
    super(`hot folder unavailable: ${reason}`);
    this.name = 'HotFolderUnavailableError';
  }
}

/**
 * An answer file exists but cannot be read YET (SMB sharing violation: the
 * scanning system still holds it open; delete pending). Not an error: the
 * job waits for the next poll.
 */
export class AnswerNotReadyError extends Error {
  readonly code = 'ANSWER_NOT_READY';
  constructor(reason: string) {
    super(`answer not ready: ${reason}`);
    this.name = 'AnswerNotReadyError';
  }
}

/**
 * An answer file the gateway will not read (docs/security.md, "Hot folder"): a link or anything but a regular
 * file, a folder reached through a link, a file or set over its bounds. The job ends with an error envelope;
 * nothing of the file reaches S3 or a message.
 */
export class AnswerRefusedError extends Error {
  readonly code = 'ANSWER_REFUSED';
  constructor(reason: string) {
    super(`answer refused: ${reason}`);
    this.name = 'AnswerRefusedError';
  }
}

/** A file over SCAN_MAX_ANSWER_BYTES: refused (`size` as listed, or "more than N" when found while reading). */
export function answerTooLarge(name: string, size: number | string, maxBytes: number): AnswerRefusedError {
  return new AnswerRefusedError(`${name} has ${size} bytes, more than the ${maxBytes} allowed (SCAN_MAX_ANSWER_BYTES)`);
}

/** The session itself failed (exit, timeout, spawn error); `output` is what it printed. */
export class SmbSessionError extends Error {
  constructor(
    message: string,
    readonly output: string,
  ) {
    super(message);
    this.name = 'SmbSessionError';
  }
}
