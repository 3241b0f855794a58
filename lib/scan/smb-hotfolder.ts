import { randomBytes } from 'node:crypto';
import { existsSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { AnswerRefusedError, HotFolderUnavailableError, SmbSessionError } from './errors';
import { AnswerFile, DEFAULT_DIRS, HotFolder, HotFolderDirs } from './hotfolder';
import { InvalidFileNameError, validateName } from '../names';
import { answerNameProblem, readExclusive } from './smb-read';
import { SmbChangeWatch } from './smb-notify';
import { CONNECTION_LOST, SmbSession } from './smb-session';
import type { WakeMode } from './change-signal';

/**
 * The hot folder on an SMB share, through Samba's `smbclient` (decision 22:
 * the npm SMB2 clients are unmaintained and speak SMB2 only partly). Same
 * protocol as LocalHotFolder: write into Tmp/, rename into Input/. The
 * password goes in a 0600 authentication file, never on a command line.
 * Every call is bounded by `timeoutMs`. All calls share one long-lived
 * smbclient session (smb-session.ts); a read-only call (listing, health)
 * that meets a broken session is tried once more on a new one. An answer file
 * is read under a deny-write open through Samba's client library (smb-read.ts):
 * smbclient's `get` cannot refuse a file its writer still holds.
 */

/** Where the hot folder is: what SCAN_SMB_* configures (config.ts). */
export interface SmbShare {
  host: string;
  port?: number;
  share: string;
  /** A folder inside the share that is the hot folder's root (`dept/in`); absent: the share's root. */
  dir?: string;
  /** Absent: a guest share (smbclient -N, no login). */
  user?: string;
  password?: string;
}

export interface SmbOptions extends SmbShare {
  dirs?: HotFolderDirs;
  timeoutMs?: number;
  smbclient?: string;
  /** The Python 3 that drives libsmbclient for the exclusive read (default: the system's, as the image installs it). */
  python?: string;
  /** An idle session is closed after this long (default 30 s). */
  idleMs?: number;
  /** A change watcher that ended is started again after this long at the earliest (default 5 s; smb-notify.ts). */
  notifyRetryMs?: number;
}

interface Run {
  /** The session answered (false: it exited, timed out or could not start). */
  ok: boolean;
  output: string;
}

/** The batch failed: the session broke, or a command answered an NT_STATUS. */
const failed = (run: Run) => !run.ok || /NT_STATUS_/.test(run.output);

const NOT_FOUND = /NT_STATUS_(OBJECT_PATH_NOT_FOUND|OBJECT_NAME_NOT_FOUND|NO_SUCH_FILE)/;
const MKDIR_STATUS = /^NT_STATUS_[A-Z_]+ making remote directory /;
/** The system's Python (an image's, a distribution's), not a version manager's shim on PATH, which adds ~1 s a read. */
const SYSTEM_PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
/** An `ls` line: name, attribute letters (smbclient's attrib_string: `r` a reparse point, `s` sparse…), size, time. */
const LISTING = /^ {2}(.+?)\s+([A-Za-z]*)\s+(\d+)\s+\w{3} \w{3}\s+\d+ [\d:]+ \d{4}$/;

export class SmbHotFolder implements HotFolder {
  private readonly dirs: HotFolderDirs;
  private authFile?: Promise<string>;
  private readonly session: SmbSession;
  /** The hot folder's root inside the share, with a trailing `/` ('' for the share's root). */
  private readonly base: string;

  constructor(private readonly options: SmbOptions) {
    const base = options.dir ? `${options.dir.replace(/\\/g, '/').replace(/^\/+|\/+$/g, '')}/` : '';
    this.base = base === '/' ? '' : base;
    const dirs = options.dirs ?? DEFAULT_DIRS;
    this.dirs = { input: this.base + dirs.input, output: this.base + dirs.output, tmp: this.base + dirs.tmp };
    const { host, port, share } = options;
    this.session = new SmbSession({
      smbclient: options.smbclient ?? 'smbclient',
      args: async () => [
        `//${host}/${share}`,
        ...(port ? ['-p', String(port)] : []),
        // A guest share: no login, no password prompt.
        ...(options.user === undefined ? ['-N'] : ['-A', await this.auth()]),
        '-m',
        'SMB3',
      ],
      timeoutMs: options.timeoutMs ?? 10_000,
      idleMs: options.idleMs ?? 30_000,
      ...(options.user === undefined ? { env: guestLoginName() } : {}),
    });
    this.watch = new SmbChangeWatch(
      { ...this.target(), path: this.dirs.output.split('/') },
      {
        python: options.python ?? SYSTEM_PYTHON,
        timeoutMs: options.timeoutMs ?? 10_000,
        ...(options.notifyRetryMs !== undefined ? { retryMs: options.notifyRetryMs } : {}),
      },
    );
  }

  /** Where the client library's programs (the exclusive read, the change watcher) log in. */
  private target() {
    const { host, port, share, user, password } = this.options;
    // A guest share: the name Samba and Windows map to their guest account (as decision 264).
    return {
      host,
      port: port ?? 445,
      share,
      user: user ?? 'guest',
      password: user === undefined ? '' : (password ?? ''),
    };
  }

  /** SMB sessions opened so far (one per process life, plus one per reconnect). */
  get sessionsStarted(): number {
    return this.session.started;
  }

  /** Ends the SMB session and the change watcher (a later call opens new ones). */
  close(): void {
    this.session.close();
    this.watch.close();
  }

  /** Wakes on the share's change notification while it is armed, else after `timeoutMs` (smb-notify.ts). */
  changed(timeoutMs: number): Promise<void> {
    return this.watch.changed(timeoutMs);
  }

  wakeMode(): WakeMode {
    return this.watch.wakeMode();
  }

  /** The change watcher (tests: how many were started, why the last one ended). */
  readonly watch: SmbChangeWatch;

  async put(name: string, bytes: Buffer | Readable): Promise<void> {
    validateName(name);
    // The name goes into smbclient's command line between quotes: a `"` would split `put`/`rename` there.
    const problem = answerNameProblem(name);
    if (problem) throw new InvalidFileNameError(`${JSON.stringify(name)} ${problem}`);
    const local = await this.scratch(bytes);
    const part = `${this.dirs.tmp}/${name}.${randomBytes(6).toString('hex')}.part`;
    try {
      // Input/ and Tmp/ are created when missing (smbclient goes on past a mkdir that finds the folder there).
      // Not retried on a broken session: the rename may have happened; the job's answer says "unavailable".
      const run = await this.run([
        `mkdir "${this.dirs.input}"`,
        `mkdir "${this.dirs.tmp}"`,
        `put "${local}" "${part}"`,
        `rename "${part}" "${this.dirs.input}/${name}"`,
      ]);
      // A mkdir's own status never decides (rule 30): a folder that exists answers OBJECT_NAME_COLLISION, or
      // ACCESS_DENIED on a share with restricted rights where we may not create folders. A folder that is really
      // missing fails the put or the rename after it, and those decide.
      const statuses = run.output.split('\n').filter((l) => /NT_STATUS_/.test(l) && !MKDIR_STATUS.test(l));
      if (!run.ok || statuses.length > 0) {
        await this.run([`del "${part}"`]).catch(() => undefined);
        throw new HotFolderUnavailableError(lastStatus(statuses.join('\n') || run.output));
      }
    } finally {
      await fs.rm(local, { force: true });
    }
  }

  async poll(jobId: string): Promise<AnswerFile[] | null> {
    validateName(jobId);
    const dir = `${this.dirs.output}/${jobId}`;
    const run = await this.readOnly([`ls "${dir}/*"`]);
    if (failed(run)) {
      if (!NOT_FOUND.test(run.output)) throw new HotFolderUnavailableError(lastStatus(run.output));
      // No answer yet — unless the hot folder's root inside the share is gone, which must not pass for "waiting".
      if (this.base && !(await this.healthy())) throw new HotFolderUnavailableError(`${this.base} is missing`);
      return null;
    }
    const answers: AnswerFile[] = [];
    for (const line of run.output.split('\n')) {
      const m = LISTING.exec(line);
      if (!m || m[2].includes('D')) continue;
      const name = m[1];
      // Every answer is read, whatever its name: the read never goes through smbclient's command parser.
      if (!name.toLowerCase().endsWith('.json') || name.startsWith('.')) continue;
      // A reparse point (a link or junction on a Windows server) is listed, so the job ends refused, never opened.
      const link = m[2].includes('r');
      const refused = () => Promise.reject(new AnswerRefusedError(`${name} is a reparse point (a link)`));
      answers.push({ name, size: Number(m[3]), read: link ? refused : (max) => this.read(jobId, name, max) });
    }
    return answers.sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  /** The hot folder's root (the share, or the folder in it) answers a listing. */
  async healthy(): Promise<boolean> {
    return !failed(await this.readOnly([this.base ? `ls "${this.base}*"` : 'ls']));
  }

  /** One answer under the contract's exclusive open; a name no open can address is the job's invalid name. */
  private async read(jobId: string, name: string, maxBytes: number): Promise<Buffer> {
    const problem = answerNameProblem(name);
    if (problem) throw new InvalidFileNameError(`answer ${JSON.stringify(name)} ${problem}`);
    return readExclusive(
      { ...this.target(), path: `${this.dirs.output}/${jobId}/${name}`.split('/') },
      { python: this.options.python ?? SYSTEM_PYTHON, timeoutMs: this.options.timeoutMs ?? 10_000, maxBytes },
    );
  }

  private async run(commands: string[]): Promise<Run> {
    try {
      return { ok: true, output: await this.session.run(commands) };
    } catch (err) {
      if (!(err instanceof SmbSessionError)) throw err;
      return { ok: false, output: `${err.output}\n${err.message}` };
    }
  }

  /** A call without side effects: once more on a new session when the first one broke under it. */
  private async readOnly(commands: string[]): Promise<Run> {
    const run = await this.run(commands);
    return run.ok && !CONNECTION_LOST.test(run.output) ? run : this.run(commands);
  }

  private auth(): Promise<string> {
    this.authFile ??= (async () => {
      const file = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'smb-auth-')), 'auth');
      await fs.writeFile(file, `username = ${this.options.user}\npassword = ${this.options.password ?? ''}\n`, {
        mode: 0o600,
      });
      return file;
    })();
    return this.authFile;
  }

  private async scratch(bytes: Buffer | Readable): Promise<string> {
    const file = path.join(os.tmpdir(), `smb-${randomBytes(8).toString('hex')}`);
    try {
      await fs.writeFile(file, bytes, { mode: 0o600, flag: 'wx' });
    } catch (err) {
      await fs.rm(file, { force: true }); // a stream that broke halfway leaves no partial copy of a user's file
      throw err;
    }
    return file;
  }
}

/**
 * For a guest share (`-N`), smbclient logs in as the process's account name (LOGNAME or USER, else the password
 * database) and, when the server refuses that name, anonymously. An account the password database does not list,
 * with neither variable set (a container's user; Lambda sets neither), makes smbclient give up before it asks the
 * server (`NT_STATUS_INVALID_PARAMETER`): such a process logs in as `guest` (decision 264).
 */
function guestLoginName(): Record<string, string> | undefined {
  if (process.env.LOGNAME || process.env.USER) return undefined;
  try {
    os.userInfo();
    return undefined;
  } catch {
    return { USER: 'guest' };
  }
}

function lastStatus(output: string): string {
  const statuses = output.match(/NT_STATUS_[A-Z_]+[^\n]*/g);
  return statuses ? statuses[statuses.length - 1].trim() : output.trim().split('\n').pop() || 'smbclient failed';
}
