import { spawn } from 'node:child_process';
import fs from 'node:fs';

/**
 * Podman as this project's machines can run it (docs/deploy.md, "Building and running the images here"; decision
 * 449): rootful, with two workarounds that a machine with a plain cgroup v2 and full capabilities does not need but
 * that are harmless there.
 *  - runc, not podman's default crun: on a hybrid cgroup v1 host whose v2 hierarchy still holds a controller, crun
 *    1.8 refuses every container ("cgroups in hybrid mode not supported, drop all controllers from cgroupv2").
 *  - explicit ulimits no higher than this process's: without CAP_SYS_RESOURCE the runtime cannot raise the
 *    containers' defaults (nofile 1048576) and fails with "setrlimit RLIMIT_NOFILE: Operation not permitted".
 */

/** A podman run failed: its arguments and the tail of what it printed. */
export class PodmanError extends Error {
  constructor(
    readonly args: string[],
    readonly code: number | null,
    readonly output: string,
  ) {
    super(`podman ${args.slice(0, 3).join(' ')} … exited ${code}:\n${output.slice(-4000)}`);
    this.name = 'PodmanError';
  }
}

const RUNC = '/usr/bin/runc';

/** Global flags: the OCI runtime (IMAGES_OCI_RUNTIME overrides; runc when Debian's package is installed). */
export function podmanGlobalArgs(env: NodeJS.ProcessEnv = process.env): string[] {
  const runtime = env.IMAGES_OCI_RUNTIME || (fs.existsSync(RUNC) ? 'runc' : '');
  return runtime ? ['--runtime', runtime] : [];
}

/** This process's hard limit of one resource (/proc/self/limits), or undefined when unlimited or unreadable. */
export function hardLimit(name: 'Max open files' | 'Max processes', limits?: string): number | undefined {
  let text = limits;
  if (text === undefined) {
    try {
      text = fs.readFileSync('/proc/self/limits', 'utf8');
    } catch {
      return undefined;
    }
  }
  const line = text.split('\n').find((l) => l.startsWith(name));
  const hard = line?.slice(name.length).trim().split(/\s+/)[1];
  return hard && /^\d+$/.test(hard) ? Number(hard) : undefined;
}

/**
 * `--ulimit` flags for `podman run` and `podman build`: open files at this process's hard limit (at most podman's
 * default), processes at 4096. An equal nproc still failed here (the runtime's own processes count against the
 * account's), and 4096 is far above what one function or the connector starts.
 */
export function ulimitArgs(limits?: string): string[] {
  const nofile = Math.min(hardLimit('Max open files', limits) ?? 1_048_576, 1_048_576);
  const nproc = Math.min(hardLimit('Max processes', limits) ?? 4096, 4096);
  return ['--ulimit', `nofile=${nofile}:${nofile}`, '--ulimit', `nproc=${nproc}:${nproc}`];
}

export interface PodmanRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * One podman command. `onLine` sees each line of its output as it comes (a build's steps); the result holds all of
 * it. Refuses (PodmanError) on a non-zero exit unless `allowFail`.
 */
export async function podman(
  args: string[],
  opts: { onLine?: (line: string) => void; allowFail?: boolean; input?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<PodmanRun> {
  const full = [...podmanGlobalArgs(opts.env), ...args];
  const child = spawn('podman', full, {
    stdio: [opts.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    env: opts.env ?? process.env,
  });
  if (opts.input !== undefined) child.stdin!.end(opts.input);
  let stdout = '';
  let stderr = '';
  let pending = '';
  const feed = (chunk: string) => {
    if (!opts.onLine) return;
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const line of lines) opts.onLine(line);
  };
  child.stdout!.on('data', (d: Buffer) => {
    stdout += d;
    feed(d.toString());
  });
  child.stderr!.on('data', (d: Buffer) => {
    stderr += d;
    feed(d.toString());
  });
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (pending && opts.onLine) opts.onLine(pending);
  if (code !== 0 && !opts.allowFail) throw new PodmanError(args, code, `${stdout}\n${stderr}`);
  return { code, stdout, stderr };
}

/** Whether an image (name or id) is in local storage. */
export async function imageExists(ref: string): Promise<boolean> {
  return (await podman(['image', 'exists', ref], { allowFail: true })).code === 0;
}

/** An image's full id and size in bytes, as local storage has it. */
export async function inspectImage(ref: string): Promise<{ id: string; size: number }> {
  const { stdout } = await podman(['image', 'inspect', '--format', '{{.Id}} {{.Size}}', ref]);
  const [id, size] = stdout.trim().split(/\s+/);
  return { id, size: Number(size) };
}
