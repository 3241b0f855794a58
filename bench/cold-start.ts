import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { InvokeCommand, LambdaClient } from '@aws-sdk/client-lambda';
import { BenchStack } from './support';

/**
 * Cold start under serverless offline: the first invocation of a handler
 * (its bundle loaded and evaluated in offline's process) against the same
 * handler warm, for the three largest bundles and a minimal handler
 * (natsPing) in the same run. Every invocation carries an event the handler
 * refuses or drops at once (no authorizer context, not a NATS message, no
 * records), so what differs between cold and warm is loading the bundle.
 * Schedule- and invoke-driven functions are left out: any event runs their work.
 */

const MINIMAL = 'natsPing';
const WARM_RUNS = 15;
const LOAD_RUNS = 7;

type Fn = BenchStack['stack']['definition']['functions'][string];

/** An event the function refuses or drops without work; undefined when it has none. */
function inertEvent(fn: Fn): object | undefined {
  const kinds = (fn.events ?? []).map((e) => Object.keys(e)[0]);
  if (kinds.includes('httpApi')) {
    // No authorizer context: every HTTP handler refuses it (the webhook: no secret header).
    return {
      version: '2.0',
      routeKey: 'GET /cold-start',
      rawPath: '/cold-start',
      rawQueryString: '',
      headers: {},
      requestContext: { http: { method: 'GET', path: '/cold-start', sourceIp: '127.0.0.1' }, requestId: 'cold' },
      isBase64Encoded: false,
    };
  }
  if (kinds.includes('nats')) return {}; // not a NATS event: logged and dropped
  if (kinds.includes('stream')) return { Records: [] };
  return undefined;
}

/** The bundle offline built for a handler (`functions/x/y.handler` → `…/functions/x/y.js`). */
function bundleFile(buildRoot: string, handler: string): string {
  const file = `${handler.slice(0, handler.lastIndexOf('.'))}.js`;
  const found = fs
    .readdirSync(buildRoot, { recursive: true })
    .map(String)
    .find((f) => f.endsWith(file));
  if (!found) throw new Error(`no bundle for ${handler} under ${buildRoot}`);
  return path.join(buildRoot, found);
}

/**
 * The same bundle required in a fresh Node process, median of LOAD_RUNS: one
 * cold invocation is a single sample on a shared machine, this is the steadier
 * figure of what the bundle's size costs.
 */
function freshLoadMs(file: string): number {
  const script = `const t = process.hrtime.bigint(); require(${JSON.stringify(file)}); process.stdout.write(String(Number(process.hrtime.bigint() - t) / 1e6));`;
  const samples = Array.from({ length: LOAD_RUNS }, () => Number(execFileSync(process.execPath, ['-e', script])));
  return samples.sort((a, b) => a - b)[Math.floor(samples.length / 2)];
}

export interface ColdRow {
  fn: string;
  bundleBytes: number;
  coldMs: number;
  warmMs: number;
  loadMs: number;
}

export async function coldStart(bench: BenchStack): Promise<ColdRow[]> {
  const { definition } = bench.stack;
  const endpoint = bench.stack.env.AWS_ENDPOINT_URL_LAMBDA;
  if (!endpoint) throw new Error('the cold-start bench needs serverless offline');
  const buildRoot = path.join(bench.stateDir, 'esbuild');
  const candidates = Object.entries(definition.functions)
    .filter(([, fn]) => inertEvent(fn))
    .map(([key, fn]) => ({ key, fn, file: bundleFile(buildRoot, fn.handler) }))
    .map((c) => ({ ...c, bytes: fs.statSync(c.file).size }))
    .sort((a, b) => b.bytes - a.bytes);
  const minimal = candidates.find((c) => c.key === MINIMAL);
  if (!minimal) throw new Error(`${MINIMAL} is not in the service`);
  const chosen = [minimal, ...candidates.filter((c) => c.key !== MINIMAL).slice(0, 3)];

  const lambda = new LambdaClient({ endpoint, region: bench.config.region, maxAttempts: 1 });
  const invoke = async (name: string, event: object) => {
    const began = process.hrtime.bigint();
    const out = await lambda.send(new InvokeCommand({ FunctionName: name, Payload: JSON.stringify(event) }));
    const ms = Number(process.hrtime.bigint() - began) / 1e6;
    if (out.FunctionError)
      throw new Error(`${name}: ${out.FunctionError} ${Buffer.from(out.Payload ?? []).toString()}`);
    return ms;
  };
  const rows: ColdRow[] = [];
  const files: string[] = [];
  try {
    for (const { key, fn, file, bytes } of chosen) {
      const event = inertEvent(fn)!;
      const coldMs = await invoke(fn.name, event);
      const warm: number[] = [];
      for (let i = 0; i < WARM_RUNS; i++) warm.push(await invoke(fn.name, event));
      warm.sort((a, b) => a - b);
      const warmMs = warm[Math.floor(warm.length / 2)];
      rows.push({ fn: key, bundleBytes: bytes, coldMs, warmMs, loadMs: 0 });
      files.push(file);
    }
  } finally {
    lambda.destroy();
  }
  // After every invocation, so the child processes cannot slow a cold one.
  return rows.map((row, i) => ({ ...row, loadMs: freshLoadMs(files[i]) }));
}

export function reportColdStart(rows: ColdRow[]): void {
  const [base] = rows;
  process.stdout.write(
    `\nCold start under serverless offline (first invocation; warm = median of ${WARM_RUNS}) and the bundle's load in a fresh process (median of ${LOAD_RUNS}); ratios to ${base.fn}\n`,
  );
  for (const row of rows) {
    process.stdout.write(
      `  ${row.fn.padEnd(18)} bundle ${(row.bundleBytes / 1024).toFixed(0).padStart(5)} KiB (x${(row.bundleBytes / base.bundleBytes).toFixed(2)})   cold ${row.coldMs.toFixed(0).padStart(4)} ms (x${(row.coldMs / base.coldMs).toFixed(2)})   warm ${row.warmMs.toFixed(1).padStart(5)} ms   fresh-process load ${row.loadMs.toFixed(0).padStart(4)} ms (x${(row.loadMs / base.loadMs).toFixed(2)})\n`,
    );
  }
}
