/**
 * How a hot folder tells its poll loop that something may have changed under
 * Output/ (`HotFolder.changed`), whatever reports it: the local folder's
 * `fs.watch`, the share's change notification (smb-notify.ts).
 *
 * Every report is counted, not only those during a wait: a change that lands
 * while a pass runs (between two waits) makes the next wait return at once
 * instead of a full poll interval later. The scanner's `mkdir .staging` and
 * its `rename` into Output/ are two reports; a pass woken by the first may
 * miss the second's folder.
 */
export class ChangeSignal {
  private changes = 0;
  private seenChanges = 0;
  private readonly waiters = new Set<() => void>();

  /** Reports counted so far (tests, the bench). */
  get count(): number {
    return this.changes;
  }

  /** Something may have changed: wakes every wait, or the next one. */
  bump(): void {
    this.changes++;
    for (const wake of [...this.waiters]) wake();
  }

  /** Resolves at the first report since the last wait returned (at once when one is pending), or after `timeoutMs`. */
  wait(timeoutMs: number): Promise<void> {
    if (this.changes !== this.seenChanges) {
      this.seenChanges = this.changes;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.waiters.delete(done);
        this.seenChanges = this.changes;
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      this.waiters.add(done);
    });
  }
}

/**
 * Which mechanism wakes the poll loop: `notify` while the hot folder's change
 * reports are armed (fs.watch; SMB2 CHANGE_NOTIFY), `poll` while they are not
 * (unsupported, broken, not yet armed): then only the poll interval and the
 * settle windows wake it.
 */
export type WakeMode = 'notify' | 'poll';
