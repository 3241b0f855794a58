import { CreateTableCommand, DeleteTableCommand } from '@aws-sdk/client-dynamodb';
import { BrokerageEmulator, LIMITS } from '../emulator/brokerage/emulator';
import { newId } from '../lib/ident';
import { silentLogger } from '../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../lib/secrets/sealer';
import { DynamoSyncDataStore } from '../lib/sync/dynamodb-data-store';
import { MANDATORY_SECTIONS } from '../lib/sync/model';
import { DEFAULT_SECTION_SETTINGS, SECTION_RUNNERS } from '../lib/sync/sections';
import { ConnectionService } from '../lib/sync/connections';
import { DynamoSyncStore } from '../lib/sync/dynamodb-store';
import { HourlyService } from '../lib/sync/service';
import { runStep, StepDeps, StepResult } from '../lib/sync/step';
import { planResources } from '../tools/stack/resources';
import { BenchStack } from './support';

const keyring = new SecretSealer(parseKeyring(newKeyringEntry('bench')).keyring!);

/**
 * A full sync of one user against the T-Bank emulator: 3 accounts (one
 * closed), 2,400 operations over a 10-year history, the four sections run at
 * once as the tick dispatches them. The rate-limit window is the real 60 s
 * (emulator and budget alike; a 10-year history needs 246 Operations calls, more than one window allows); the lower bound is the windows the busiest
 * service's calls need at its limit. Reported: wall time, calls per service,
 * 429s, and wall / lower bound.
 */
export async function tbankSync(bench: BenchStack, windowMs = 60_000) {
  const { dynamodb, documents } = bench.aws;
  const template = planResources(bench.stack.definition.resources.Resources).tables.find(
    (t) => t.logicalId === 'SyncTable',
  )!;
  const TableName = `${template.create.TableName}-bench-tbank`;
  await dynamodb.send(new CreateTableCommand({ ...template.create, TableName }));
  const emulator = new BrokerageEmulator({ windowMs });
  const url = await emulator.listen();
  try {
    const store = new DynamoSyncStore({ documents, table: TableName });
    const hourly = new HourlyService({ store, waitBoundMs: 15 * 60_000 });
    const connections = new ConnectionService({ store, sealer: async () => keyring });
    const data = new DynamoSyncDataStore({ documents, table: TableName });
    const user = newId();
    await connections.putConnection(user, `t.${user}`, Date.now());
    const r = await hourly.reserveHourly(user, Date.now(), { run_id: newId(), run_deadline: Date.now() + 55_000 });
    if (!('head' in r) || !r.head) throw new Error('no reservation');
    const attempt = r.head.attempt_id;
    const began = performance.now();
    // A step near its bound hands its section over to a continuation (decision 326): run here as Lambda would.
    const continuations: Promise<StepResult>[] = [];
    const deps: StepDeps = {
      hourly,
      dispatch: async (input) => void continuations.push(runStep(deps, input)),
      connections,
      data,
      tbank: { baseUrl: url, appName: 'bench', rateWindowMs: windowMs },
      settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 3650 },
      timeoutMs: 120_000,
      now: Date.now,
      log: silentLogger,
      runners: SECTION_RUNNERS,
    };
    const results: StepResult[] = await Promise.all(
      MANDATORY_SECTIONS.map(async (section) => {
        const step = { user_id: user, attempt_id: attempt, step_id: newId(), section };
        await hourly.recordDispatch(user, attempt, section, step.step_id);
        return runStep(deps, step);
      }),
    );
    for (let i = 0; i < continuations.length; i++) results.push(await continuations[i]);
    const ms = performance.now() - began;
    const byService: Record<string, number> = {};
    for (const [method, n] of Object.entries(emulator.calls))
      byService[method.split('/')[0]] = (byService[method.split('/')[0]] ?? 0) + n;
    // The limits' sustained rate: n calls at `limit` per window need (n - limit) / limit windows beyond a first full
    // burst. (Windows are epoch-aligned, so a run's wall also depends on where in a window it starts: up to one window more.)
    const lowerBoundMs = Math.max(
      1,
      ...Object.entries(byService).map(
        ([service, n]) => (Math.max(0, n - LIMITS[service]) / LIMITS[service]) * windowMs,
      ),
    );
    const operations = (await data.operations(user, '1970-01-01T00:00:00.000Z', '9999-01-01T00:00:00.000Z')).length;
    return { ms, results, byService, rateLimited: emulator.rateLimited, lowerBoundMs, windowMs, operations };
  } finally {
    await emulator.close();
    await dynamodb.send(new DeleteTableCommand({ TableName }));
  }
}

export function reportTbankSync(r: Awaited<ReturnType<typeof tbankSync>>): void {
  process.stdout.write(
    `\nSync: one user's full T-Bank sync (emulator, rate window ${r.windowMs} ms, DynamoDB Local)\n`,
  );
  process.stdout.write(`  steps ${r.results.join(', ')}; ${r.operations} operations stored\n`);
  process.stdout.write(`  calls per service ${JSON.stringify(r.byService)}; 429 answers ${r.rateLimited}\n`);
  process.stdout.write(
    `  wall ${r.ms.toFixed(0)} ms; lower bound from the limits ${r.lowerBoundMs.toFixed(0)} ms; x${(r.ms / r.lowerBoundMs).toFixed(2)} of the bound\n`,
  );
}
