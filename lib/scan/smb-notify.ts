import { ChildProcess, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { childEnv } from '../util/child-env';
import { smbcPrelude } from './smb-python';
import { ChangeSignal, WakeMode } from './change-signal';
import type { ExclusiveReadTarget } from './smb-read';

/**
 * The share's change notification (SMB2 CHANGE_NOTIFY) as wake-ups of the poll loop (decision 445): one watcher
 * program for the hot folder's life, Samba's client library's `smbc_notify` on Output/ with the whole tree watched,
 * driven over ctypes by the Python below, as the exclusive read is (smb-read.ts). A report only wakes the loop:
 * settling, reading and every bound stay the poll's, so a notification lost or late costs latency, never an answer.
 *
 * Measured on Samba 4.17: a change reaches us ~1 ms after it is made; `change notify = no` (a global setting)
 * refuses the request at once (ENOSYS); smbd killed ends the wait at once (ECONNABORTED); smbd stopped keeps
 * the session, and the pending request answers once it resumes. The program is a child process, never a call
 * in ours: it cannot hold a slot or a thread, and a hung one is killed. While it is not armed (refused, broken,
 * restarting after RETRY_MS) the loop wakes on its poll interval (`wakeMode()` says `poll`).
 */

// Python after the shared opening (smb-python.ts). Prints `ready` once the folder is
// open, `change` per report, `tick` every tick_ms without one; exits 3 when the folder cannot be opened, 4 when
// the wait ends (the errno's name on stderr).
const PROGRAM =
  smbcPrelude({ initFailedExit: 3 }) +
  String.raw`lib.smbc_opendir.argtypes = [ctypes.c_char_p]
lib.smbc_opendir.restype = P
class ACTION(ctypes.Structure):
    _fields_ = [('action', ctypes.c_uint32), ('filename', ctypes.c_char_p)]
CB = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(ACTION), ctypes.c_size_t, P)
lib.smbc_notify.argtypes = [P, ctypes.c_int, ctypes.c_uint32, ctypes.c_uint, CB, P]
d = lib.smbc_opendir(url.encode())
if not d:
    print(errno.errorcode.get(ctypes.get_errno(), '?'), file=sys.stderr); sys.exit(3)
print('ready', flush=True)
@CB
def cb(actions, n, priv):
    print('change' if n else 'tick', flush=True)
    return 0
r = lib.smbc_notify(d, 1, 0xfff, a['tick_ms'], cb, None)
print(errno.errorcode.get(ctypes.get_errno(), '?'), file=sys.stderr); sys.exit(4)
`;

export interface NotifyOptions {
  python: string;
  /** Opening the folder (the session's setup) is bounded by this. */
  timeoutMs: number;
  /** A watcher that ended (refused, broken) is started again after this long at the earliest (default 5 s). */
  retryMs?: number;
  /** A program that has said nothing for this long (no tick, no change) is presumed hung and killed (default 10 s). */
  silentMs?: number;
}

const TICK_MS = 2000;

/** Output/ of the hot folder on the share, watched while `changed` is being called. */
export class SmbChangeWatch {
  private readonly signal = new ChangeSignal();
  private child?: ChildProcess;
  private armed = false;
  private retryAt = 0;
  private heardAt = 0;
  private watchdog?: NodeJS.Timeout;
  private failures = 0;
  private waitedAt = 0;
  private retryTimer?: NodeJS.Timeout;
  private wasArmed = false;
  /** Watchers started so far, and why the last one ended (tests, the health check's detail). */
  started = 0;
  lastEnd?: string;

  constructor(
    private readonly target: ExclusiveReadTarget,
    private readonly options: NotifyOptions,
  ) {}

  changed(timeoutMs: number): Promise<void> {
    this.waitedAt = Date.now();
    this.arm();
    return this.signal.wait(timeoutMs);
  }

  wakeMode(): WakeMode {
    return this.armed ? 'notify' : 'poll';
  }

  close(): void {
    this.retryAt = 0;
    this.waitedAt = 0;
    clearTimeout(this.retryTimer);
    this.child?.kill('SIGKILL');
    this.ended('closed');
  }

  private arm(): void {
    if (this.child || Date.now() < this.retryAt) return;
    const child = spawn(this.options.python, ['-c', PROGRAM], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: childEnv({ PYTHONUTF8: '1' }),
    });
    this.child = child;
    this.started++;
    this.wasArmed = false;
    this.heardAt = Date.now();
    let err = '';
    child.stderr!.on('data', (d: Buffer) => (err = (err + d.toString('utf8')).slice(-500)));
    child.stdin!.on('error', () => undefined);
    child.on('error', (e) => (err = e.message));
    createInterface({ input: child.stdout! }).on('line', (line) => {
      if (this.child !== child) return;
      this.heardAt = Date.now();
      // Armed once the server has taken the request (its first tick or report), not at the folder's open: a server
      // without notification opens the folder, then refuses the request.
      if (line === 'ready')
        this.signal.bump(); // a change between the last pass and now went unreported: look again
      else {
        this.armed = true;
        this.wasArmed = true;
        if (line === 'change') this.signal.bump();
      }
    });
    child.on('close', (code, sig) => {
      if (this.child !== child) return;
      this.ended(err.trim().split('\n').pop() || sig || String(code));
      // Refused again and again (a server without notification): each try waits twice as long, up to a minute.
      const retryMs = this.options.retryMs ?? 5000;
      this.failures = this.wasArmed ? 0 : this.failures + 1;
      const delay = Math.min(60_000, retryMs * 2 ** Math.max(0, this.failures - 1));
      this.retryAt = Date.now() + delay;
      // Armed again without waiting for the loop's next wait (which may be a whole poll interval away), but only
      // while a loop is waiting on us: a folder nobody polls any more starts no watchers.
      this.retryTimer = setTimeout(() => Date.now() - this.waitedAt < 60_000 && this.arm(), delay);
      this.retryTimer.unref();
    });
    // Never keeps a process (a Lambda container, a CLI) alive.
    child.unref();
    for (const s of [child.stdin, child.stdout, child.stderr]) (s as unknown as { unref?: () => void })?.unref?.();
    const silentMs = this.options.silentMs ?? 10_000;
    const opening = this.options.timeoutMs + 2000;
    this.watchdog = setInterval(() => {
      if (Date.now() - this.heardAt > (this.armed ? Math.max(silentMs, TICK_MS * 3) : opening)) child.kill('SIGKILL');
    }, 1000);
    this.watchdog.unref();
    const { host, port, share, user, password, path } = this.target;
    child.stdin!.end(
      `${JSON.stringify({ host, port, share, user, password, path, timeout_ms: this.options.timeoutMs, tick_ms: TICK_MS })}\n`,
    );
  }

  private ended(reason: string): void {
    if (this.watchdog) clearInterval(this.watchdog);
    this.watchdog = undefined;
    this.child = undefined;
    if (reason !== 'closed') this.lastEnd = reason;
    this.armed = false;
    this.signal.bump(); // a change may have been lost with the watcher: the loop looks at once
  }
}
