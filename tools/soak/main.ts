import fs from 'node:fs';
import path from 'node:path';
import { parseArgs, USAGE, UsageError } from './args';
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

async function main() {
  let args;
  try {
    args = parseArgs(process.argv.slice(2));
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    process.stderr.write(`[soak] ${err.message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (args.help) return void process.stdout.write(`${USAGE}\n`);
  say(`${args.minutes} min, seed ${args.seed}${args.chaos ? '' : ', no chaos'}: starting the stack`);
  const run = await runSoak({
    root,
    minutes: args.minutes,
    seed: args.seed,
    chaos: args.chaos,
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
  process.exit(run.report.violations_total ? 1 : 0);
}

main().catch((err) => {
  process.stderr.write(`[soak] ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
