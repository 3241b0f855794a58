import fs from 'node:fs';
import net from 'node:net';

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
 * process's bind (EADDRINUSE in its log): two stacks starting at the same
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
  const logFile = (err as { logFile?: unknown } | null)?.logFile;
  if (typeof logFile !== 'string' || !fs.existsSync(logFile)) return false;
  return /EADDRINUSE|address already in use/i.test(fs.readFileSync(logFile, 'utf8'));
}
