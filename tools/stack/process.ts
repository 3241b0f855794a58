import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { PortTakenError, ServiceStartError } from './errors';
import { foreignHolder } from './ports';

export { PortTakenError, ServiceStartError };

/**
 * Supervised child processes of the local stack. Each runs in its own process
 * group (detached) so stop() ends it AND its children (serverless offline's
 * esbuild service, java's threads...) by pid, with SIGKILL after a grace period.
 */

export interface RunningService {
  name: string;
  /** The current process-group leader: it changes when the supervisor restarts the service. */
  readonly pid: number;
  logFile: string;
  url: string;
  stop(): Promise<void>;
  /**
   * From now on, a death that stop() did not ask for is reported and, when
   * `restart`, answered by starting the same command again (same port, same
   * log) at most `maxRestarts` times within `restartWindowMs`: a crash loop
   * stops the stack, a crash now and then never does. Never a silent half-dead stack.
   */
  supervise(policy: Supervision): void;
}

export interface Supervision {
  restart: boolean;
  /** Restarts allowed within the window (default 3). */
  maxRestarts?: number;
  /** The window a crash loop is judged over (default 10 minutes): older restarts no longer count. */
  restartWindowMs?: number;
  onDeath(death: ServiceDeath): void;
}

export interface ServiceDeath {
  service: string;
  pid: number;
  reason: string;
  logFile: string;
  /** restarted: running again as `newPid`; fatal: not restarted (policy, budget spent, or the restart failed). */
  outcome: 'restarted' | 'fatal';
  newPid?: number;
  /** Why a death is fatal, when it is. */
  detail?: string;
}

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  url: string;
  ready: () => Promise<boolean>;
  /**
   * The TCP port the service listens on: once ready, its listener must be the
   * service's own process group, not another stack's server answering there.
   */
  port?: number;
  readyTimeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
}

// Groups still running. If this process dies by an unhandled error, 'exit' still
// fires: end them there (synchronously) so a crash never orphans the stack.
const live = new Set<number>();
process.once('exit', () => {
  for (const pid of live) signalGroup(pid, 'SIGTERM');
});

interface Launched {
  pid: number;
  exit: Promise<void>;
  exited(): string | undefined;
  stop(): Promise<void>;
}

async function launch(spec: ProcessSpec): Promise<Launched> {
  const out = fs.openSync(spec.logFile, 'a');
  const child = spawn(spec.command, spec.args, {
    cwd: spec.cwd,
    env: spec.env ?? process.env,
    detached: true,
    stdio: ['ignore', out, out],
  });
  fs.closeSync(out);
  if (child.pid !== undefined) live.add(child.pid);

  let exited: string | undefined;
  const exit = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      if (child.pid !== undefined) live.delete(child.pid);
      exited = signal ? `killed by ${signal}` : `exited with code ${code}`;
      resolve();
    });
    child.once('error', (err) => {
      exited = err.message;
      resolve();
    });
  });

  const stop = async () => {
    if (exited !== undefined || child.pid === undefined) return;
    signalGroup(child.pid, 'SIGTERM');
    const killed = await Promise.race([exit.then(() => true), sleep(5000, false, { ref: false })]);
    if (!killed) {
      signalGroup(child.pid, 'SIGKILL');
      await exit;
    }
  };

  const deadline = Date.now() + (spec.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (exited !== undefined) throw new ServiceStartError(spec.name, spec.logFile, exited);
    if (await spec.ready()) {
      const holder = spec.port === undefined ? undefined : foreignHolder(spec.port, child.pid!);
      if (holder === undefined) break;
      await stop();
      throw new PortTakenError(spec.name, spec.logFile, spec.port!, holder);
    }
    if (Date.now() > deadline) {
      await stop();
      throw new ServiceStartError(spec.name, spec.logFile, `not ready after ${spec.readyTimeoutMs ?? 60_000} ms`);
    }
    await sleep(100);
  }
  return { pid: child.pid!, exit, exited: () => exited, stop };
}

export async function startProcess(spec: ProcessSpec): Promise<RunningService> {
  let current = await launch(spec);
  let stopping = false;
  let policy: Supervision | undefined;
  // When each restart happened: only those within the window count against the budget.
  let restarts: number[] = [];

  // Called once per launched process when it exits; only an unasked death of the current one counts.
  const onExit = async (running: Launched) => {
    if (stopping || !policy || running !== current) return;
    const death = { service: spec.name, pid: running.pid, reason: running.exited() ?? 'exited', logFile: spec.logFile };
    const fatal = (detail: string) => policy?.onDeath({ ...death, outcome: 'fatal', detail });
    if (!policy.restart) return fatal('this service is not restarted');
    const windowMs = policy.restartWindowMs ?? 10 * 60_000;
    restarts = restarts.filter((at) => Date.now() - at < windowMs);
    if (restarts.length >= (policy.maxRestarts ?? 3))
      return fatal(`restarted ${restarts.length} times in the last ${Math.round(windowMs / 1000)} s already`);
    restarts.push(Date.now());
    try {
      const next = await launch(spec);
      if (stopping) return void (await next.stop());
      current = next;
      watch(next);
      policy.onDeath({ ...death, outcome: 'restarted', newPid: next.pid });
    } catch (err) {
      fatal(`restart failed: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  const watch = (running: Launched) => void running.exit.then(() => onExit(running));
  watch(current);

  return {
    name: spec.name,
    get pid() {
      return current.pid;
    },
    logFile: spec.logFile,
    url: spec.url,
    supervise(next) {
      const first = !policy;
      policy = next;
      // Died between its start and now (the rest of the stack was starting): report it now.
      if (first && current.exited() !== undefined) void onExit(current);
    },
    async stop() {
      stopping = true;
      await current.stop();
    },
  };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
