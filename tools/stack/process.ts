import { spawn } from 'node:child_process';
import fs from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Supervised child processes of the local stack. Each runs in its own process
 * group (detached) so stop() ends it AND its children (serverless offline's
 * esbuild service, java's threads...) by pid, with SIGKILL after a grace period.
 */

export interface RunningService {
  name: string;
  pid: number;
  logFile: string;
  url: string;
  stop(): Promise<void>;
}

export class ServiceStartError extends Error {
  constructor(readonly service: string, readonly logFile: string, reason: string) {
    super(`${service} failed to start: ${reason} (log: ${logFile})`);
    this.name = 'ServiceStartError';
  }
}

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  logFile: string;
  url: string;
  ready: () => Promise<boolean>;
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

export async function startProcess(spec: ProcessSpec): Promise<RunningService> {
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
    if (await spec.ready()) break;
    if (Date.now() > deadline) {
      await stop();
      throw new ServiceStartError(spec.name, spec.logFile, `not ready after ${spec.readyTimeoutMs ?? 60_000} ms`);
    }
    await sleep(100);
  }
  return { name: spec.name, pid: child.pid!, logFile: spec.logFile, url: spec.url, stop };
}

function signalGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    // Already gone.
  }
}
