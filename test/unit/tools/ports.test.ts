import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { foreignHolder, freePort, listeners, processGroup, retryLostPort } from '../../../tools/stack/ports';

/** Two stacks starting at once prefer the same emulator ports: the loser of the bind starts again elsewhere. */
describe('retryLostPort', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ports-'));
  const failure = (text: string) => {
    const logFile = path.join(dir, `${Math.random()}.log`);
    fs.writeFileSync(logFile, text);
    return Object.assign(new Error('x failed to start: exited with code 1'), { logFile });
  };

  it('starts again, on the port freePort picks then, when the bind lost the race', async () => {
    const held = net.createServer();
    await new Promise<void>((r) => held.listen(0, '127.0.0.1', r));
    const taken = (held.address() as net.AddressInfo).port;
    const ports: number[] = [];
    const port = await retryLostPort(async () => {
      const chosen = await freePort(taken);
      ports.push(chosen);
      if (ports.length === 1) throw failure('Error: listen EADDRINUSE: address already in use 127.0.0.1:8090');
      return chosen;
    });
    held.close();
    expect(ports).toHaveLength(2);
    expect(port).not.toBe(taken);
  });

  it('does not retry any other failure', async () => {
    let runs = 0;
    await expect(
      retryLostPort(async () => {
        runs++;
        throw failure('TypeError: boom');
      }),
    ).rejects.toThrow('failed to start');
    expect(runs).toBe(1);
  });

  it('gives up after its tries', async () => {
    let runs = 0;
    await expect(
      retryLostPort(async () => {
        runs++;
        throw failure('EADDRINUSE');
      }, 3),
    ).rejects.toThrow();
    expect(runs).toBe(3);
  });
});

/** The check after a bind: who listens on a port, from /proc. */
describe('listeners', () => {
  it('names this process for a port it listens on, and nothing for a closed port', async () => {
    const server = net.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const held = listeners(port)!;
      expect(held.map((l) => l.pid)).toEqual([process.pid]);
      expect(foreignHolder(port, processGroup(process.pid)!)).toBeUndefined();
      // Any other process group is not the holder: this process is named with its command line.
      expect(foreignHolder(port, process.pid + 1_000_000)).toMatch(new RegExp(`^pid ${process.pid} \\(.*node`));
    } finally {
      await new Promise((r) => server.close(r));
    }
    expect(listeners(port)).toEqual([]);
    expect(foreignHolder(port, 1)).toBeUndefined();
  });
});
