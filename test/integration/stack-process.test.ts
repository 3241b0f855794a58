import fs from 'node:fs';
import path from 'node:path';
import { ServiceStartError, startProcess } from '../../tools/stack/process';

/** The stack's supervisor with real processes: failures name the service and its log. */
describe('startProcess', () => {
  const logDir = path.join(process.env.TEST_STATE_DIR!, 'process-test');
  beforeAll(() => fs.mkdirSync(logDir, { recursive: true }));

  it('names the service and its log when the process dies before it is ready', async () => {
    const logFile = path.join(logDir, 'dies.log');
    const err = await startProcess({
      name: 'dies-at-once',
      command: process.execPath,
      args: ['-e', 'console.error("port already in use"); process.exit(3)'],
      logFile,
      url: 'n/a',
      ready: async () => false,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ServiceStartError);
    expect(err.message).toContain('dies-at-once');
    expect(err.message).toContain('exited with code 3');
    expect(err.message).toContain(logFile);
    expect(fs.readFileSync(logFile, 'utf8')).toContain('port already in use');
  });

  it('gives up on a process that never gets ready, and leaves nothing running', async () => {
    const err = await startProcess({
      name: 'never-ready',
      command: process.execPath,
      args: ['-e', 'setInterval(() => {}, 1000)'],
      logFile: path.join(logDir, 'never.log'),
      url: 'n/a',
      readyTimeoutMs: 300,
      ready: async () => false,
    }).catch((e) => e);
    expect(err).toBeInstanceOf(ServiceStartError);
    expect(err.message).toContain('not ready after 300 ms');
  });

  it('a supervisor that crashes takes its services down with it', async () => {
    const pidFile = path.join(logDir, 'orphan.pid');
    const script = `
      const { startProcess } = require(${JSON.stringify(path.resolve(__dirname, '../../tools/stack/process.ts'))});
      startProcess({ name: 'sleeper', command: '/bin/sh', args: ['-c', 'echo $$ > ${pidFile}; exec sleep 60'], logFile: ${JSON.stringify(path.join(logDir, 'sleeper.log'))},
        url: 'n/a', ready: async () => require('fs').existsSync(${JSON.stringify(pidFile)}) })
        .then(() => { throw new Error('crash'); });`;
    const { spawnSync } = await import('node:child_process');
    spawnSync(process.execPath, [require.resolve('tsx/cli'), '-e', script], { timeout: 20_000 });
    const pid = Number(fs.readFileSync(pidFile, 'utf8'));
    let alive = true;
    for (let i = 0; i < 40 && alive; i++) {
      try {
        alive = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
      } catch {
        alive = false;
      }
      if (alive) await new Promise((r) => setTimeout(r, 50));
    }
    expect(alive).toBe(false);
  });

  it('stop() ends the whole process group, children included', async () => {
    const pidFile = path.join(logDir, 'child.pid');
    const service = await startProcess({
      name: 'parent',
      command: '/bin/sh',
      args: ['-c', `sleep 60 & echo $! > ${pidFile}; wait`],
      logFile: path.join(logDir, 'parent.log'),
      url: 'n/a',
      ready: async () => fs.existsSync(pidFile) && fs.readFileSync(pidFile, 'utf8').trim() !== '',
    });
    const child = Number(fs.readFileSync(pidFile, 'utf8'));
    await service.stop();
    // Dead = gone from /proc, or a zombie waiting for init to reap it (it runs nothing).
    const alive = (pid: number) => {
      try {
        return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z';
      } catch {
        return false;
      }
    };
    for (let i = 0; i < 40 && (alive(service.pid) || alive(child)); i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive(service.pid)).toBe(false);
    expect(alive(child)).toBe(false);
  });
});
