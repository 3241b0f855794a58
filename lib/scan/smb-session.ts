import { ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import type { Socket } from 'node:net';
import { childEnv } from '../util/child-env';
import { SmbSessionError } from './errors';

/**
 * One long-lived `smbclient` driven over its stdin, instead of one process
 * (and one SMB negotiate + session setup, ~100 ms) per operation.
 *
 * smbclient prints no prompt when stdin is not a terminal, so each batch of
 * commands is followed by `lcd <a path that cannot exist>`, whose local
 * "chdir to <path> failed" line marks the end of the batch's output (no
 * round trip to the server). Commands run one batch at a time, in call order.
 *
 * `stdbuf -i0 -oL -eL`: smbclient waits for stdin with select() and then
 * reads through a buffered FILE, so a second line already in that buffer
 * would sit there until more input arrives (the session hangs); unbuffered
 * stdin reads exactly one line. Output is line-buffered so each batch's
 * output arrives when it is printed, stderr merged in order (smbclient
 * reports a successful get/put on stderr, failures on stdout).
 *
 * A session that breaks (the process exits, a batch times out, the server
 * drops the connection) is thrown away; the next batch starts a new one. An
 * idle session is closed after `idleMs`, and one found idle that long (a
 * container thawed after a freeze) is replaced before use: a server may have
 * dropped its connection meanwhile.
 */

export interface SmbSessionOptions {
  smbclient: string;
  /** smbclient's arguments: the share, port, authentication file, protocol. Never a password. */
  args: () => Promise<string[]>;
  timeoutMs: number;
  idleMs: number;
  /** Variables added to smbclient's environment (lib/util/child-env.ts: never the whole of the process's). */
  env?: Record<string, string>;
}

/** Statuses after which the connection under a session is gone. */
export const CONNECTION_LOST =
  /NT_STATUS_(CONNECTION_(DISCONNECTED|RESET|ABORTED|REFUSED)|PIPE_BROKEN|IO_TIMEOUT|INVALID_NETWORK_RESPONSE|NETWORK_NAME_DELETED|USER_SESSION_DELETED|NETWORK_SESSION_EXPIRED|END_OF_FILE)/;

interface Pending {
  marker: string;
  resolve: (output: string) => void;
  reject: (err: SmbSessionError) => void;
  timer: NodeJS.Timeout;
}

export class SmbSession {
  private child?: ChildProcess;
  private output = '';
  private pending?: Pending;
  private queue: Promise<unknown> = Promise.resolve();
  private lastUsed = 0;
  private seq = 0;
  private idleTimer?: NodeJS.Timeout;
  /** Sessions started so far (tests: a reconnect is visible). */
  started = 0;
  private readonly markerRoot = `/nonexistent-${randomBytes(8).toString('hex')}`;

  constructor(private readonly options: SmbSessionOptions) {}

  /** Runs the commands (one per line) as one batch; resolves with their output, whatever NT_STATUS it holds. */
  run(commands: string[]): Promise<string> {
    for (const c of commands)
      if (/[\r\n]/.test(c)) return Promise.reject(new Error('an smbclient command must be one line'));
    const result = this.queue.then(() => this.exec(commands));
    this.queue = result.catch(() => undefined);
    return result;
  }

  /** Ends the session (its process); a later `run` starts a new one. */
  close(): void {
    clearTimeout(this.idleTimer);
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    this.fail(new SmbSessionError('smbclient session closed', this.output));
  }

  private async exec(commands: string[]): Promise<string> {
    clearTimeout(this.idleTimer);
    if (this.child && Date.now() - this.lastUsed > this.options.idleMs) this.close();
    const child = this.child ?? (await this.start());
    const marker = `${this.markerRoot}/${++this.seq}`;
    const done = new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        const output = this.output;
        this.pending = undefined;
        this.close();
        reject(new SmbSessionError(`smbclient gave no answer within ${this.options.timeoutMs} ms`, output));
      }, this.options.timeoutMs);
      this.pending = { marker: `chdir to ${marker} failed`, resolve, reject, timer };
    });
    child.stdin!.write(`${commands.join('\n')}\nlcd "${marker}"\n`);
    this.drain();
    try {
      const output = await done;
      // The server dropped us: this batch's statuses say so; the next batch gets a new connection.
      if (CONNECTION_LOST.test(output)) this.close();
      return output;
    } finally {
      this.lastUsed = Date.now();
      if (this.child) {
        this.idleTimer = setTimeout(() => this.close(), this.options.idleMs);
        this.idleTimer.unref();
      }
    }
  }

  private async start(): Promise<ChildProcess> {
    const args = await this.options.args();
    this.output = '';
    this.started++;
    // "$@" passes every argument as it is: nothing here goes through the shell's parsing.
    const child = spawn('sh', ['-c', 'exec stdbuf -i0 -oL -eL "$@" 2>&1', 'sh', this.options.smbclient, ...args], {
      stdio: ['pipe', 'pipe', 'ignore'],
      env: childEnv(this.options.env), // never the process's secrets (decision 396)
    });
    this.child = child;
    child.stdout!.setEncoding('utf8');
    child.stdout!.on('data', (chunk: string) => {
      if (this.child !== child) return;
      this.output += chunk;
      this.drain();
    });
    child.stdin!.on('error', () => undefined); // a dead process: its 'close' fails the batch
    const gone = (why: string) => {
      if (this.child !== child) return;
      this.child = undefined;
      this.fail(new SmbSessionError(why, this.output));
    };
    child.on('error', (err) => gone(`smbclient could not start: ${err.message}`));
    child.on('close', (code, signal) => gone(`smbclient exited (${signal ?? code})`));
    // Never keeps a process (a CLI, a test, a Lambda container) alive: a pending batch's timer does that.
    child.unref();
    (child.stdin as unknown as Socket).unref?.();
    (child.stdout as unknown as Socket).unref?.();
    return child;
  }

  private drain(): void {
    const pending = this.pending;
    if (!pending) return;
    const at = this.output.indexOf(pending.marker);
    if (at < 0) return;
    const lineEnd = this.output.indexOf('\n', at);
    if (lineEnd < 0) return;
    const output = this.output.slice(0, at);
    this.output = this.output.slice(lineEnd + 1);
    clearTimeout(pending.timer);
    this.pending = undefined;
    pending.resolve(output);
  }

  private fail(err: SmbSessionError): void {
    const pending = this.pending;
    this.pending = undefined;
    this.output = '';
    if (!pending) return;
    clearTimeout(pending.timer);
    pending.reject(err);
  }
}
