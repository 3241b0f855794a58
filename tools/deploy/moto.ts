import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { findBinary } from '../stack/debian';
import { freePort, httpAnswers, retryLostPort } from '../stack/ports';
import { startProcess } from '../stack/process';

/**
 * moto's server mode (`moto_server`): an independent implementation of the AWS
 * APIs (CloudFormation, Lambda, DynamoDB, S3, SQS, IAM, KMS, Secrets Manager,
 * Logs…) on one loopback port, in memory. The deploy test (test/aws/) deploys
 * the service into it with `serverless deploy` (docs/deploy.md, "Proven in moto").
 * It runs through tools/deploy/moto-server.py: moto as shipped, with one fix
 * (a KMS key created by CloudFormation with a JSON-object policy).
 *
 * moto and cfn-lint are Python packages, not Debian ones: the machine images
 * this project runs on ship them (pip, Python 3.11); PyPI is not reachable from
 * those machines, so nothing here installs them. `npm run setup` says how when
 * they are missing, and the deploy test skips, naming the missing package.
 */

/** The versions the deploy test was written against (moto's CloudFormation lints templates with cfn-lint, in-process). */
export const PYTHON_TOOLS = {
  moto: { module: 'moto.server', pip: 'moto[server]==5.2.1' },
  cfnLint: { module: 'cfnlint', pip: 'cfn-lint==1.51.0' },
} as const;

export const PIP_INSTALL = `python3 -m pip install '${PYTHON_TOOLS.moto.pip}' '${PYTHON_TOOLS.cfnLint.pip}'`;

const imports = (python: string, module: string) =>
  spawnSync(python, ['-c', `import ${module}`], { stdio: 'ignore', timeout: 60_000 }).status === 0;

let chosen: string | undefined;

/**
 * The Python that runs moto: MOTO_PYTHON when set; else the first of python3 on
 * the PATH and pyenv's python3 (where the machine images install pip packages,
 * and which a non-interactive shell may not have on its PATH) that imports it.
 */
export function motoPython(): string {
  if (process.env.MOTO_PYTHON) return process.env.MOTO_PYTHON;
  const candidates = ['python3', path.join(os.homedir(), '.pyenv', 'shims', 'python3')];
  chosen ??= candidates.find((python) => findBinary(python) && imports(python, PYTHON_TOOLS.moto.module)) ?? 'python3';
  return chosen;
}

/** The Python packages the deploy test needs that this machine lacks (empty: it can run). */
export function missingMotoTools(): string[] {
  const python = motoPython();
  if (!findBinary(python)) return [python];
  // moto's server imports flask (its `server` extra): a bare `pip install moto` cannot serve.
  return Object.values(PYTHON_TOOLS)
    .filter((tool) => !imports(python, tool.module))
    .map((tool) => tool.pip);
}

export interface Moto {
  /** http://127.0.0.1:<port>: the value of AWS_ENDPOINT_URL for every SDK client and `serverless`. */
  endpoint: string;
  port: number;
  pid: number;
  logFile: string;
  stop(): Promise<void>;
}

/**
 * Starts moto's server on a free loopback port and resolves once it answers.
 * It runs in a directory of its own (it may write scratch files in its working
 * directory), logs to `logFile` (a temporary file by default), and stop() ends
 * it by its process group.
 */
export async function startMoto(
  options: {
    port?: number;
    logFile?: string;
    readyTimeoutMs?: number;
    /** false: moto as shipped (`python3 -m moto.server`), without tools/deploy/moto-server.py's fix. */
    patched?: boolean;
  } = {},
): Promise<Moto> {
  const python = motoPython();
  const launcher = options.patched === false ? ['-m', 'moto.server'] : [path.join(__dirname, 'moto-server.py')];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tss-moto-'));
  const logFile = options.logFile ?? path.join(dir, 'moto.log');
  return retryLostPort(async () => {
    const port = await freePort(options.port);
    const endpoint = `http://127.0.0.1:${port}`;
    const service = await startProcess({
      name: 'moto_server',
      command: python,
      args: [...launcher, '-H', '127.0.0.1', '-p', String(port)],
      logFile,
      url: endpoint,
      cwd: dir,
      // Python buffers a piped stdout: unbuffered, the log shows each request as it comes.
      env: { ...process.env, PYTHONUNBUFFERED: '1' },
      // moto's own dashboard API: answers once the server routes requests.
      ready: () => httpAnswers(`${endpoint}/moto-api/`),
      readyTimeoutMs: options.readyTimeoutMs ?? 30_000,
    });
    return {
      endpoint,
      port,
      pid: service.pid,
      logFile,
      async stop() {
        await service.stop();
        // Its working directory (and the log, unless the caller placed it elsewhere).
        fs.rmSync(dir, { recursive: true, force: true });
      },
    };
  });
}

/** Forgets every resource of every service (moto's reset API): a fresh account without a restart. */
export async function resetMoto(endpoint: string): Promise<void> {
  const res = await fetch(`${endpoint}/moto-api/reset`, { method: 'POST' });
  if (!res.ok) throw new Error(`moto reset: HTTP ${res.status}`);
}

// `npx tsx tools/deploy/moto.ts`: a moto server for trying docs/deploy.md by hand; Ctrl-C stops it.
if (require.main === module) {
  const missing = missingMotoTools();
  if (missing.length) {
    process.stderr.write(`[moto] missing: ${missing.join(', ')} (${PIP_INSTALL})\n`);
    process.exit(1);
  }
  void startMoto({ port: Number(process.env.MOTO_PORT) || undefined }).then((moto) => {
    process.stdout.write(
      [
        `[moto] moto's server pid ${moto.pid}, log ${moto.logFile}`,
        `[moto] export AWS_ENDPOINT_URL=${moto.endpoint} AWS_ACCESS_KEY_ID=testing AWS_SECRET_ACCESS_KEY=testing`,
        '[moto] Ctrl-C stops it',
        '',
      ].join('\n'),
    );
    const stop = () => void moto.stop().then(() => process.exit(0));
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
}
