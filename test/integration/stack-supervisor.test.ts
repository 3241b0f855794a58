import fs from 'node:fs';
import path from 'node:path';
import { freePort, tcpOpen } from '../../tools/stack/ports';
import net from 'node:net';
import { PortTakenError, RunningService, ServiceDeath, startProcess } from '../../tools/stack/process';
import { startOffline } from '../../tools/stack/services';
import { startStack, Stack } from '../../tools/stack/stack';
import { ROOT } from '../support/globalSetup';
import { stackNats } from '../support/stack';

/**
 * The supervisor after start (issue 11): a service that dies is named with its
 * log and restarted on the same port, or the stack stops loudly. Real
 * processes, killed with SIGKILL as the OOM killer would.
 */

const logDir = path.join(process.env.TEST_STATE_DIR!, 'supervisor-test');
beforeAll(() => fs.mkdirSync(logDir, { recursive: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, probe: () => T | Promise<T>, timeoutMs = 30_000): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

const zombie = (pid: number) => {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] === 'Z';
  } catch {
    return true;
  }
};

/** A TCP listener on `port`: ready when the port accepts, like the stack's real services. */
async function listener(name: string, port: number): Promise<RunningService> {
  return startProcess({
    name,
    command: process.execPath,
    args: [
      '-e',
      `require('net').createServer((s) => s.end()).listen(${port}, '127.0.0.1', () => console.log('listening ${port}'))`,
    ],
    logFile: path.join(logDir, `${name}.log`),
    url: `tcp://127.0.0.1:${port}`,
    ready: () => tcpOpen(port),
    port,
  });
}

describe('a supervised process', () => {
  it('killed after start is restarted on the same port, and the death is reported with its log', async () => {
    const port = await freePort();
    const service = await listener('restartable', port);
    const deaths: ServiceDeath[] = [];
    service.supervise({ restart: true, onDeath: (d) => deaths.push(d) });
    try {
      const first = service.pid;
      process.kill(-first, 'SIGKILL');
      const death = await until('the restart', () => deaths[0]);
      expect(death).toMatchObject({
        service: 'restartable',
        pid: first,
        reason: 'killed by SIGKILL',
        outcome: 'restarted',
        logFile: path.join(logDir, 'restartable.log'),
      });
      expect(service.pid).toBe(death.newPid);
      expect(service.pid).not.toBe(first);
      expect(await tcpOpen(port)).toBe(true);
    } finally {
      await service.stop();
    }
    expect(await tcpOpen(port)).toBe(false);
  });

  it('that may not be restarted is reported fatal, naming the service and its log', async () => {
    const service = await listener('not-restarted', await freePort());
    const deaths: ServiceDeath[] = [];
    service.supervise({ restart: false, onDeath: (d) => deaths.push(d) });
    process.kill(-service.pid, 'SIGKILL');
    const death = await until('the report', () => deaths[0]);
    expect(death).toMatchObject({
      service: 'not-restarted',
      outcome: 'fatal',
      reason: 'killed by SIGKILL',
      logFile: path.join(logDir, 'not-restarted.log'),
    });
    expect(fs.readFileSync(death.logFile, 'utf8')).toContain('listening');
  });

  it('that keeps dying is fatal once its restarts are spent', async () => {
    const service = await listener('flapping', await freePort());
    const deaths: ServiceDeath[] = [];
    service.supervise({ restart: true, maxRestarts: 2, onDeath: (d) => deaths.push(d) });
    try {
      for (let i = 0; i < 3; i++) {
        const pid = service.pid;
        process.kill(-pid, 'SIGKILL');
        await until(`death ${i + 1}`, () => deaths.length > i);
      }
      expect(deaths.map((d) => d.outcome)).toEqual(['restarted', 'restarted', 'fatal']);
      expect(deaths[2].detail).toContain('restarted 2 times');
    } finally {
      await service.stop();
    }
  });

  it('that dies now and then is restarted every time: only deaths within the window count', async () => {
    // The one-hour soak killed smbd a fourth time after 50 minutes, and a lifetime budget of 3 stopped the stack.
    const service = await listener('now-and-then', await freePort());
    const deaths: ServiceDeath[] = [];
    service.supervise({ restart: true, maxRestarts: 2, restartWindowMs: 1500, onDeath: (d) => deaths.push(d) });
    try {
      for (let i = 0; i < 4; i++) {
        if (i > 0) await sleep(1600); // the earlier restarts have left the window
        process.kill(-service.pid, 'SIGKILL');
        await until(`death ${i + 1}`, () => deaths.length > i);
      }
      expect(deaths.map((d) => d.outcome)).toEqual(['restarted', 'restarted', 'restarted', 'restarted']);
    } finally {
      await service.stop();
    }
  });

  it('is not ready on a port another process answers: the holder is named and its own process stopped', async () => {
    // Another stack's server took the port between freePort's check and this service's bind.
    const other = net.createServer((s) => s.end());
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const port = (other.address() as net.AddressInfo).port;
    const pidFile = path.join(logDir, 'late.pid');
    try {
      const err = await startProcess({
        name: 'late-binder',
        command: '/bin/sh',
        args: ['-c', `echo $$ > ${pidFile}; exec sleep 60`],
        logFile: path.join(logDir, 'late-binder.log'),
        url: `tcp://127.0.0.1:${port}`,
        ready: () => tcpOpen(port),
        port,
      }).catch((e) => e);
      expect(err).toBeInstanceOf(PortTakenError);
      expect(err.message).toContain(`port ${port} is held by pid ${process.pid}`);
      expect(err.message).toContain('not by the late-binder this stack started');
      const pid = Number(fs.readFileSync(pidFile, 'utf8'));
      await until('the late binder to end', () => !fs.existsSync(`/proc/${pid}`) || zombie(pid));
    } finally {
      other.close();
    }
  });

  it("offline's fixed ports: one already held stops the start at once, naming the holder and the settings", async () => {
    const other = net.createServer();
    await new Promise<void>((r) => other.listen(0, '127.0.0.1', r));
    const held = (other.address() as net.AddressInfo).port;
    try {
      const err = await startOffline(
        { root: ROOT, logDir, say: () => undefined },
        { httpPort: held, lambdaPort: await freePort(), stage: 'test', env: process.env, natsTrigger: 'plugin' },
      ).catch((e) => e);
      expect(err).toBeInstanceOf(PortTakenError);
      expect(err.message).toContain(`port ${held} is held by pid ${process.pid}`);
      expect(err.message).toContain('HTTP_PORT and LAMBDA_PORT');
    } finally {
      other.close();
    }
  });

  it('stopped on purpose is not reported', async () => {
    const service = await listener('stopped', await freePort());
    const deaths: ServiceDeath[] = [];
    service.supervise({ restart: true, onDeath: (d) => deaths.push(d) });
    await service.stop();
    await sleep(500);
    expect(deaths).toEqual([]);
  });
});

describe('the embedded stack supervising its services', () => {
  let stack: Stack | undefined;
  const said: string[] = [];
  let fatal: ServiceDeath | undefined;

  beforeAll(async () => {
    stack = await startStack({
      root: ROOT,
      stateDir: path.join(process.env.TEST_STATE_DIR!, 'supervised-stack'),
      stage: 'test',
      offline: false,
      emulators: false,
      say: (line) => said.push(line),
      onFatal: (death) => (fatal = death),
    });
  }, 120_000);
  afterAll(async () => stack?.stop());

  const service = (name: string) => stack!.services.find((s) => s.name === name)!;

  it('restarts nats-server killed after start, on the same port', async () => {
    const nats = service('nats-server');
    const before = nats.pid;
    const port = Number(new URL(nats.url).port);
    process.kill(-before, 'SIGKILL');
    const line = await until('the restart line', () =>
      said.find((l) => l.startsWith('nats-server') && l.includes('restarted')),
    );
    expect(line).toContain(`pid ${before}`);
    expect(line).toContain(nats.logFile);
    expect(nats.pid).not.toBe(before);
    expect(await tcpOpen(port)).toBe(true);
  }, 60_000);

  it('stops loudly when in-memory DynamoDB Local dies (a restart would bring it back empty), naming it and its log', async () => {
    const dynamodb = service('dynamodb-local');
    const s3Port = Number(new URL(service('s3rver').url).port);
    process.kill(-dynamodb.pid, 'SIGKILL');
    const death = await until('the fatal report', () => fatal);
    expect(death).toMatchObject({ service: 'dynamodb-local', outcome: 'fatal', logFile: dynamodb.logFile });
    const line = said.find((l) => l.startsWith('FATAL: dynamodb-local'));
    expect(line).toContain(dynamodb.logFile);
    expect(line).toContain('Stopping the stack');
    // Stopped: not half-dead.
    expect(await tcpOpen(s3Port)).toBe(false);
  }, 60_000);
});

describe("the run's own stack", () => {
  it('restarts serverless offline killed after start: the same port answers again, from a new process', async () => {
    const pid: number = JSON.parse(process.env.TEST_STACK_PIDS!)['serverless-offline'];
    const health = async () => {
      try {
        const res = await fetch(`${process.env.TEST_HTTP_URL}/healthcheck`, { signal: AbortSignal.timeout(5000) });
        return res.status === 200 ? ((await res.json()) as { uptime_s: number }) : undefined;
      } catch {
        return undefined;
      }
    };
    expect(await health()).toBeDefined();
    process.kill(-pid, 'SIGKILL');
    await until('offline gone', async () => !(await health()), 10_000);
    // The supervisor's own verdict (globalSetup keeps what the stack says in stack.log): restarted, fully ready.
    const said = path.join(process.env.TEST_STATE_DIR!, 'stack.log');
    const line = await until(
      'the restart line',
      () =>
        fs
          .readFileSync(said, 'utf8')
          .split('\n')
          .find((l) => l.startsWith(`serverless-offline (pid ${pid}) died`)),
      170_000,
    );
    expect(line).toMatch(/killed by SIGKILL; restarted as pid \d+ \(log: .*serverless-offline\.log\)/);
    const back = await health();
    expect(back!.uptime_s).toBeLessThan(170);
    // The NATS bridge inside offline is back too.
    const nc = await stackNats('supervisor-test');
    try {
      expect(
        JSON.parse(new TextDecoder().decode((await nc.request('health.ping', 'back?', { timeout: 10_000 })).data))
          .status,
      ).toBe('ok');
    } finally {
      await nc.close();
    }
  }, 200_000);
});
