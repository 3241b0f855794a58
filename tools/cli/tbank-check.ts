import { ConfigError } from '../../lib/config/errors';
import { EnvReader } from '../../lib/config/env';
import { createLogger } from '../../lib/log';
import { MemorySyncDataStore } from '../../test/support/memory-sync-data-store';
import { SharedCallBudget } from '../../lib/sync/rate-budget';
import { DEFAULT_SECTION_SETTINGS, SECTION_RUNNERS } from '../../lib/sync/sections';
import { TBANK_PRODUCTION_URL, TBankClient } from '../../lib/sync/tbank/client';
import { TBankError } from '../../lib/sync/tbank/errors';
import { MANDATORY_SECTIONS, SkippedAccount } from '../../lib/sync/model';
import { cliSpec, runCli } from './run';

/**
 * `npm run tbank:check`: a real-token check. Reads TBANK_TOKEN (a read-only
 * token is enough) and TBANK_API_URL (production by default; the sandbox host
 * for a sandbox token), runs every section's own code against the API with an
 * in-memory store (nothing is written anywhere), and prints the accounts and
 * the counts a sync would fetch. SYNC_HISTORY_DAYS bounds the operations read.
 */
export const TBANK_CHECK_CLI = cliSpec({
  usage: `usage: TBANK_TOKEN=t.… npm run tbank:check

Tries a T-Bank Invest API token without storing anything: runs every sync
section's own code against the API with an in-memory store and prints the
accounts, the counts a sync would fetch and the calls per service.

  --help  this text

Environment: TBANK_TOKEN (required; read-only is enough), TBANK_API_URL (default
the production host ${TBANK_PRODUCTION_URL}; the sandbox host for a sandbox token),
SYNC_HISTORY_DAYS (how far back operations are read, default ${DEFAULT_SECTION_SETTINGS.historyDays}),
TBANK_APP_NAME, LOG_LEVEL=debug. Exit 0 every section read, 1 a section failed,
2 bad usage or settings.`,
  options: {},
});

async function main(): Promise<number> {
  const r = new EnvReader(process.env);
  const token = r.string('TBANK_TOKEN', {
    pattern: /^\S{1,4096}$/,
    hint: 'a T-Bank Invest API token, read-only is enough',
    secret: true,
  });
  const baseUrl = r.url('TBANK_API_URL', ['https', 'http'], { optional: true }) || TBANK_PRODUCTION_URL;
  const historyDays = r.int('SYNC_HISTORY_DAYS', {
    default: DEFAULT_SECTION_SETTINGS.historyDays,
    min: 1,
    max: 36_500,
  });
  r.done();
  const log = createLogger({ tool: 'tbank-check' }, { level: process.env.LOG_LEVEL === 'debug' ? 'debug' : 'error' });
  const data = new MemorySyncDataStore();
  const user = 'tbank-check';
  const controller = new AbortController();
  const bound = 10 * 60_000;
  const started = performance.now();
  const api = new TBankClient({
    baseUrl,
    token,
    appName: process.env.TBANK_APP_NAME?.trim() || 'torrent-scan-sync',
    signal: controller.signal,
    remainingMs: () => bound - (performance.now() - started),
    log,
    budget: new SharedCallBudget({ data, user, windowMs: 60_000 }),
  });
  const timer = setTimeout(() => controller.abort(new Error('tbank:check took more than 10 minutes')), bound);
  process.stdout.write(`T-Bank Invest API at ${baseUrl}, history ${historyDays} days\n`);
  let failed = false;
  for (const section of MANDATORY_SECTIONS) {
    try {
      const skipped: SkippedAccount[] = [];
      const items = await SECTION_RUNNERS[section]({
        api,
        skipped,
        data,
        user,
        attempt_id: 'tbank-check',
        now: Date.now,
        log,
        settings: { ...DEFAULT_SECTION_SETTINGS, historyDays },
      });
      const skips = skipped.map((a) => `${a.account_id} ${a.reason}`).join(', ');
      process.stdout.write(`  ${section.padEnd(20)} ${items} items${skips ? `; skipped ${skips}` : ''}\n`);
    } catch (err) {
      failed = true;
      const detail =
        err instanceof TBankError
          ? `${err.code} (${err.message}; x-tracking-id ${err.trackingId ?? 'none'})`
          : String(err);
      process.stdout.write(`  ${section.padEnd(20)} FAILED ${detail}\n`);
      if (err instanceof TBankError && (err.kind === 'unauthenticated' || err.kind === 'forbidden')) break;
    }
  }
  clearTimeout(timer);
  if (api.unknownValues.size)
    process.stdout.write(
      `unknown enum values (kept raw): ${[...api.unknownValues].map(([k, n]) => `${k} ×${n}`).join(', ')}\n`,
    );
  process.stdout.write('accounts:\n');
  for (const a of data.accounts.values()) {
    const ops = [...data.windows.values()].filter((w) => w.account_id === a.id).reduce((n, w) => n + w.count, 0);
    const positions = data.portfolios.get(a.id)?.positions.length ?? 0;
    process.stdout.write(
      `  ${a.id}  ${a.type}  ${a.status}  ${a.access_level}  "${a.name}"  positions ${positions}  operations ${ops}\n`,
    );
  }
  const events = [...data.events.values()].reduce(
    (n, e) => ({ dividends: n.dividends + e.dividends, bonds: n.bonds + e.bond_events }),
    { dividends: 0, bonds: 0 },
  );
  process.stdout.write(
    `events: ${events.dividends} dividends, ${events.bonds} bond events; catalog: ${data.catalog.size} instruments of ${data.seen.size} seen\n`,
  );
  process.stdout.write(`calls: ${JSON.stringify(api.calls)}, 429 answers: ${api.rateLimited}\n`);
  return failed ? 1 : 0;
}

if (require.main === module)
  runCli(TBANK_CHECK_CLI, main, { expected: [ConfigError], crash: { code: 1, stack: true } });
