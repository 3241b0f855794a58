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
