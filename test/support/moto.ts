import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, retryLostPort, tcpOpen } from '../../tools/stack/ports';
import { RunningService, startProcess } from '../../tools/stack/process';

/**
 * moto's server (an independent implementation of the AWS APIs:
 * `pip install 'moto[server]'`, installed on this project's machines) on a free
 * loopback port, for tests that need real AWS behaviour (KMS, Secrets Manager,
 * SQS, …) without an account: one server answers every service moto has. Point
 * a client at `endpoint` (AWS_ENDPOINT_URL or a service's
 * AWS_ENDPOINT_URL_<SERVICE>); any credentials do. Its log goes to `dir`
 * (created when missing; a fresh temporary folder by default). One process per
 * test file; `stop()` ends it by its process group.
 *
 * `kmsKeyState: 'aws'` (the default) starts it through moto-kms.py, which adds
 * the one KMS rule moto 5.2 lacks: a disabled key, or one pending deletion,
 * refuses (DisabledException, KMSInvalidStateException, as AWS answers).
 * 'as-shipped' runs moto unmodified.
 */
export interface Moto {
  endpoint: string;
  service: RunningService;
  stop(): Promise<void>;
}

/** The Python that runs moto (MOTO_PYTHON, else python3); a clear refusal when moto is missing. */
function motoPython(): string {
  const python = process.env.MOTO_PYTHON ?? 'python3';
  try {
    execFileSync(python, ['-c', 'import moto.server'], { stdio: 'ignore' });
  } catch {
    throw new Error(`moto's server is not installed for ${python}: pip install 'moto[server]' (or set MOTO_PYTHON)`);
  }
  return python;
}

export async function startMoto(opts: { kmsKeyState?: 'aws' | 'as-shipped'; dir?: string } = {}): Promise<Moto> {
  const python = motoPython();
  const dir = opts.dir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'tss-moto-'));
  fs.mkdirSync(dir, { recursive: true });
  const launcher =
    (opts.kmsKeyState ?? 'aws') === 'aws' ? [path.join(__dirname, 'moto-kms.py')] : ['-m', 'moto.server'];
  const service = await retryLostPort(async () => {
    const port = await freePort();
    return startProcess({
      name: 'moto',
      command: python,
      args: [...launcher, '-H', '127.0.0.1', '-p', String(port)],
      logFile: path.join(dir, `moto-${port}.log`),
      url: `http://127.0.0.1:${port}`,
      ready: () => tcpOpen(port),
      readyTimeoutMs: 30_000,
    });
  });
  return { endpoint: service.url, service, stop: () => service.stop() };
}
