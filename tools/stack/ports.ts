import fs from 'node:fs';
import net from 'node:net';
import { PortTakenError } from './errors';

/** `preferred` when it is free on 127.0.0.1, else a port the kernel picks. */
export async function freePort(preferred?: number): Promise<number> {
  if (preferred !== undefined && (await canListen(preferred))) return preferred;
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** True once something accepts TCP connections on host:port. */
export function tcpOpen(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ port, host });
    socket.setTimeout(500);
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('timeout', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(false));
  });
}

/** True once anything answers HTTP at url (any status: emulators answer 400 to a bare GET). */
export async function httpAnswers(url: string): Promise<boolean> {
  try {
    await fetch(url, { signal: AbortSignal.timeout(1000) });
    return true;
  } catch {
    return false;
  }
}

/**
 * Runs a start again when it lost its port between `freePort`'s check and the
 * process's bind (EADDRINUSE in its log, or another process found listening
 * there once it was ready: PortTakenError): two stacks starting at the same
 * moment (the tests' beside `npm start`, two checkouts) prefer the same ports.
 */
export async function retryLostPort<T>(start: () => Promise<T>, tries = 3): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await start();
    } catch (err) {
      if (attempt >= tries || !lostPort(err)) throw err;
    }
  }
}

function lostPort(err: unknown): boolean {
  if (err instanceof PortTakenError) return true;
  const logFile = (err as { logFile?: unknown } | null)?.logFile;
  if (typeof logFile !== 'string' || !fs.existsSync(logFile)) return false;
  return /EADDRINUSE|address already in use/i.test(fs.readFileSync(logFile, 'utf8'));
}

/** A socket listening on a TCP port, and the process holding it when this user may see it. */
export interface Listener {
  inode: string;
  pid?: number;
}

/**
 * Who listens on TCP `port` (IPv4 and IPv6, any address), from /proc: the
 * check after a service's bind that the port answering is the service's own.
 * Undefined where /proc cannot tell (not Linux).
 */
export function listeners(port: number): Listener[] | undefined {
  const inodes = new Set<string>();
  let readable = false;
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = fs.readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    readable = true;
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state, , , , , , inode] = line.trim().split(/\s+/);
      // State 0A is LISTEN; the local address ends in the port in hex.
      if (state === '0A' && local && parseInt(local.slice(local.lastIndexOf(':') + 1), 16) === port && inode !== '0')
        inodes.add(inode);
    }
  }
  if (!readable) return undefined;
  const found = new Map<string, number>();
  if (inodes.size > 0)
    for (const pid of fs.readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
      let fds: string[];
      try {
        fds = fs.readdirSync(`/proc/${pid}/fd`);
      } catch {
        continue; // gone, or another user's process
      }
      for (const fd of fds) {
        const inode = /^socket:\[(\d+)\]$/.exec(safeReadlink(`/proc/${pid}/fd/${fd}`))?.[1];
        if (inode && inodes.has(inode) && !found.has(inode)) found.set(inode, Number(pid));
      }
      if (found.size === inodes.size) break;
    }
  return [...inodes].map((inode) => ({ inode, pid: found.get(inode) }));
}

/** The process group of pid (field 5 of /proc/<pid>/stat, after the command name in parentheses). */
export function processGroup(pid: number): number | undefined {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
  } catch {
    return undefined;
  }
}

/** A process for a message: its pid and command line. */
export function describeProcess(pid: number | undefined): string {
  if (pid === undefined) return 'a process this user cannot see';
  try {
    const cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean).join(' ');
    return `pid ${pid} (${cmd.length > 120 ? `${cmd.slice(0, 117)}...` : cmd})`;
  } catch {
    return `pid ${pid}`;
  }
}

/**
 * Undefined when a listener on `port` belongs to process group `group` (the
 * service we started) or /proc cannot tell; else who holds the port instead.
 */
export function foreignHolder(port: number, group: number): string | undefined {
  const found = listeners(port);
  if (!found || found.length === 0) return undefined;
  if (found.some((l) => l.pid !== undefined && processGroup(l.pid) === group)) return undefined;
  return describeProcess(found[0].pid);
}

function safeReadlink(file: string): string {
  try {
    return fs.readlinkSync(file);
  } catch {
    return '';
  }
}
