import { EnvReader, type Env } from '../../lib/config/env';
import { ConfigError } from '../../lib/config/errors';
import { newId, parseId } from '../../lib/ident';
import { CliArgs, cliSpec, runCli, UsageError } from './run';
import { loadStackEnv } from './stack-env';

/**
 * `npm run sync:demo`: the first run's sync in one command. Connects a demo
 * account on the T-Bank emulator through the API, as a user would, and waits
 * for the minute tick's attempt, so /sync shows it.
 */

export const DEMO_CLI = cliSpec({
  usage: `usage: npm run sync:demo [-- --user <id>] [--no-wait] [--timeout <seconds>]

Connects a demo brokerage account on the T-Bank emulator of \`npm start\` (POST
/sync/connections with an emulator token, as a user would), then waits for the
minute tick to start its first sync attempt and prints where the console shows it.
Refused when the stack talks to the real T-Bank API: connect your own token there
(docs/sync.md).

  --user <id>          the user to connect (a ULID; default: a new one each run)
  --no-wait            connect and return, without waiting for the attempt
  --timeout <seconds>  how long to wait for the attempt, 1-3600 (default 120)
  --help               this text

The stack is the environment's: API_URL, API_TOKEN (a token with sync:admin and
sync:read) and TBANK_API_URL (read from .stack/env when \`npm start\` runs).
Exit 0 connected (and the attempt started), 1 no attempt within the timeout,
2 bad usage or settings, or the API refused.`,
  options: { user: { type: 'string' }, 'no-wait': { type: 'boolean' }, timeout: { type: 'string' } },
});

/** The API or the emulator said no: the user's to fix (a token, a stack), said plainly. */
export class DemoRefusedError extends Error {}

/** Any `t.…` token reads the emulator's seeded dataset (docs/sync.md, the emulator). */
export const DEMO_TOKEN = 't.sync-demo';

export interface DemoTarget {
  api: string;
  token: string;
  tbank: string;
}

export function demoTarget(env: Env): DemoTarget {
  const r = new EnvReader(env);
  const api = r.url('API_URL', ['http', 'https']);
  const token = r.string('API_TOKEN', { pattern: /^\S{1,512}$/, hint: 'an API token with sync:admin', secret: true });
  const tbank = r.url('TBANK_API_URL', ['http', 'https']);
  r.done();
  return { api: api.replace(/\/+$/, ''), token, tbank: tbank.replace(/\/+$/, '') };
}

/** Only the emulator answers its own knob route: a real T-Bank host never gets the demo token. */
export async function assertEmulator(tbank: string): Promise<void> {
  const refused = new DemoRefusedError(
    `TBANK_API_URL ${tbank} is not the T-Bank emulator: sync:demo connects a demo token to the emulator only; with the real API, POST /sync/connections with your own token (docs/sync.md)`,
  );
  const host = new URL(tbank).hostname;
  if (host !== '127.0.0.1' && host !== 'localhost' && host !== '[::1]') throw refused;
  const answer = await fetch(`${tbank}/emulator/faults`, { signal: AbortSignal.timeout(5000) }).catch(() => {
    throw new DemoRefusedError(`the T-Bank emulator at ${tbank} does not answer: is \`npm start\` running?`);
  });
  if (answer.status !== 200) throw refused;
}

interface Hourly {
  state: string;
  meta: { attempt_id: string };
}

/** Before its first attempt the read says where the connection stands (docs/sync.md, decision 365). */
interface Queued {
  state: 'queued';
  queue: { position: number; expected_at: string };
}

export async function connectDemo(target: DemoTarget, user: string): Promise<void> {
  const answer = await call(target, 'POST', '/sync/connections', { user_id: user, token: DEMO_TOKEN });
  if (answer.status !== 201) throw new DemoRefusedError(`POST /sync/connections answered ${refusal(answer)}`);
}

/** The user's latest attempt, or its place in the first syncs' queue while none has started. */
export async function latestAttempt(target: DemoTarget, user: string): Promise<Hourly | Queued | undefined> {
  const answer = await call(target, 'GET', `/sync/${user}/hourly`);
  if (answer.status === 404) return undefined;
  if (answer.status !== 200) throw new DemoRefusedError(`GET /sync/${user}/hourly answered ${refusal(answer)}`);
  return answer.body as Hourly | Queued;
}

async function call(target: DemoTarget, method: string, path: string, body?: unknown) {
  const answer = await fetch(`${target.api}${path}`, {
    method,
    headers: { authorization: `Bearer ${target.token}`, 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  }).catch((err: Error) => {
    throw new DemoRefusedError(`the API at ${target.api} does not answer (${err.message}): is \`npm start\` running?`);
  });
  const text = await answer.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = text;
  }
  return { status: answer.status, body: parsed };
}

function refusal(answer: { status: number; body: unknown }): string {
  const error = (answer.body as { error?: { code?: string; message?: string } } | undefined)?.error;
  return `${answer.status}${error?.code ? ` ${error.code}` : ''}${error?.message ? `: ${error.message}` : ''}`;
}

async function main({ values }: CliArgs<typeof DEMO_CLI.options>): Promise<number> {
  const timeoutText = values.timeout ?? '120';
  if (!/^\d{1,4}$/.test(timeoutText) || Number(timeoutText) < 1 || Number(timeoutText) > 3600)
    throw new UsageError('--timeout must be 1..3600 seconds');
  let user: string;
  try {
    user = values.user === undefined ? newId() : parseId(values.user);
  } catch {
    throw new UsageError(
      `--user must be a ULID (26 characters of Crockford base32), not ${JSON.stringify(values.user)}`,
    );
  }
  loadStackEnv();
  const target = demoTarget(process.env);
  await assertEmulator(target.tbank);
  await connectDemo(target, user);
  const say = (line: string) => process.stdout.write(`${line}\n`);
  say(`connected demo user ${user} to the T-Bank emulator (token ${DEMO_TOKEN}: 2 brokerage accounts, Cyrillic names)`);
  say(`  console   ${target.api}/sync/${user}   (and ${target.api}/sync)`);
  say(`  API       curl -s -H "Authorization: Bearer $API_TOKEN" ${target.api}/sync/${user}/hourly`);
  if (values['no-wait']) return 0;

  // The tick runs every minute (syncTick's schedule); a terminal sees the wait counted, a log a line every 10 s.
  const out = process.stderr;
  const began = Date.now();
  const deadline = began + Number(timeoutText) * 1000;
  let shown = 0;
  for (;;) {
    const hourly = await latestAttempt(target, user);
    const waited = Math.round((Date.now() - began) / 1000);
    const place =
      hourly?.state === 'queued' && 'queue' in hourly
        ? ` (number ${hourly.queue.position} in line, expected by ${hourly.queue.expected_at})`
        : '';
    if (hourly && !('queue' in hourly)) {
      if (out.isTTY) out.write('\r\x1b[K');
      say(`attempt ${hourly.meta.attempt_id} ${hourly.state} after ${waited} s: ${target.api}/sync/${user}`);
      return 0;
    }
    if (Date.now() >= deadline) {
      if (out.isTTY) out.write('\n');
      out.write(
        `no attempt within ${timeoutText} s: the minute tick did not run (is syncTick's schedule on? SCHEDULES_ENABLED)\n`,
      );
      return 1;
    }
    if (out.isTTY) out.write(`\rwaiting for the minute tick to start the first attempt${place}… ${waited} s\x1b[K`);
    else if (waited - shown >= 10) {
      shown = waited;
      out.write(`waiting for the minute tick to start the first attempt${place}… ${waited} s\n`);
    }
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
}

if (require.main === module) runCli(DEMO_CLI, main, { expected: [ConfigError, DemoRefusedError] });
