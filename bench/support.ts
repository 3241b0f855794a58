import fs from 'node:fs';
import path from 'node:path';
import { createAwsClients, AwsClients, TOOL_DYNAMODB_LIMITS } from '../lib/aws/clients';
import { Config, loadConfig } from '../lib/config';
import { startStack, Stack, StackOptions } from '../tools/stack/stack';

/**
 * Benchmarks measure RATIOS within one run on one machine: absolute numbers
 * from an emulator on 2 cores say little, a ratio between two ways of doing
 * the same thing on the same emulator says a lot.
 */

export const ROOT = path.resolve(__dirname, '..');

export interface BenchStack {
  stack: Stack;
  /** The run's state folder (logs, and serverless offline's bundles under `esbuild/`). */
  stateDir: string;
  config: Config;
  aws: AwsClients;
  stop(): Promise<void>;
}

export async function startBenchStack(options: Partial<StackOptions> = {}): Promise<BenchStack> {
  const stateDir = path.join(ROOT, '.stack', `bench-${process.pid}`);
  const stack = await startStack({
    root: ROOT,
    stateDir,
    stage: 'bench',
    offline: false,
    emulators: false,
    ...options,
  });
  Object.assign(process.env, stack.env);
  const config = loadConfig(process.env);
  const aws = createAwsClients(config, TOOL_DYNAMODB_LIMITS);
  return {
    stack,
    stateDir,
    config,
    aws,
    async stop() {
      aws.dynamodb.destroy();
      aws.s3.destroy();
      await stack.stop();
      fs.rmSync(stateDir, { recursive: true, force: true });
    },
  };
}

/** Runs `op(i)` for i in [0, count) with `concurrency` in flight; returns ops per second. */
export async function throughput(
  count: number,
  concurrency: number,
  op: (i: number) => Promise<unknown>,
): Promise<number> {
  let next = 0;
  const began = process.hrtime.bigint();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) await op(next++);
    }),
  );
  const seconds = Number(process.hrtime.bigint() - began) / 1e9;
  return count / seconds;
}

export interface Row {
  name: string;
  opsPerSecond: number;
  note?: string;
}

/** Prints rows with their ratio to the first (the baseline). */
export function report(title: string, rows: Row[]): void {
  const base = rows[0].opsPerSecond;
  process.stdout.write(`\n${title}\n`);
  for (const row of rows) {
    const ratio = (row.opsPerSecond / base).toFixed(2);
    process.stdout.write(
      `  ${row.name.padEnd(44)} ${row.opsPerSecond.toFixed(0).padStart(7)} ops/s   x${ratio} of ${rows[0].name}${row.note ? `   (${row.note})` : ''}\n`,
    );
  }
}
