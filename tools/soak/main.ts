import fs from 'node:fs';
import path from 'node:path';
import { runCli } from '../cli/run';
import { SOAK_CLI, soakArgs } from './args';
import { formatReport } from './report';
import { runSoak } from './run';

/**
 * `npm run soak [-- --minutes N --seed N --no-chaos --json <path>]`: the three
 * domains at once on the stack npm start runs, under load and injected
 * faults, then every invariant audited from the stores, NATS and the real
 * client (docs/testing.md, "Soak"). Exits 1 when the audit found a violation.
 */

const root = path.resolve(__dirname, '..', '..');
const say = (line: string) => process.stdout.write(`[soak] ${line}\n`);

async function main(values: Parameters<typeof soakArgs>[0]): Promise<number> {
  const args = soakArgs(values);
  say(
    `${args.minutes} min, seed ${args.seed}${args.chaos ? '' : ', no chaos'}, hot folder ${args.hotFolder}: starting the stack`,
  );
  const run = await runSoak({
    root,
    minutes: args.minutes,
    seed: args.seed,
    chaos: args.chaos,
    hotFolder: args.hotFolder,
    say,
    progress: process.stdout,
  });
  let stopping = false;
  const stop = async () => {
    if (stopping) return;
    stopping = true;
    await run.stop();
  };
  process.on('SIGINT', () => void stop().then(() => process.exit(130)));
  try {
    process.stdout.write(formatReport(run.report));
    if (args.json) {
      fs.mkdirSync(path.dirname(path.resolve(args.json)), { recursive: true });
      fs.writeFileSync(args.json, JSON.stringify(run.report, null, 2) + '\n');
      say(`report written to ${args.json}`);
    }
  } finally {
    await stop();
  }
  return run.report.violations_total ? 1 : 0;
}

runCli(SOAK_CLI, ({ values }) => main(values));
