import { BrokerageEmulator } from '../../emulator/brokerage/emulator';
import { newId } from '../../lib/ident';
import { silentLogger } from '../../lib/log';
import { DynamoSyncDataStore } from '../../lib/sync/dynamodb-data-store';
import { DEFAULT_SECTION_SETTINGS } from '../../lib/sync/sections';
import { runStep, StepDeps, StepInput } from '../../lib/sync/step';
import { Dispatch, tickUser } from '../../lib/sync/tick';
import { stackClients, stackConfig, stackSealer } from './stack';
import { fakeDateOnly, syncServices } from './sync';

/**
 * Attempts of a connected user run in the test's process against a T-Bank emulator of its own and the
 * stack's OWN sync table, so that the deployed functions under serverless offline read what they stored
 * (the holdings' routes, the console). Date is jest's fake clock, fixed to an instant inside the emulator's
 * dataset (its payments run 2025-03 to 2027-03) so no test depends on the day it runs; `later` makes an
 * hour pass between attempts. Timers and I/O are real.
 */
export const DATASET_NOW = Date.UTC(2026, 11, 7, 6, 0, 0);

export function holdingsStack() {
  const aws = stackClients();
  const table = stackConfig().tables.sync;
  const { hourly, connections } = syncServices({
    documents: aws.documents,
    table,
    waitBoundMs: 15 * 60_000,
    sealer: stackSealer(),
  });
  const data = new DynamoSyncDataStore({ documents: aws.documents, table });
  const brokerage = new BrokerageEmulator();
  let brokerageUrl = '';
  const state = { clock: DATASET_NOW };

  const stepDeps = (dispatch: Dispatch): StepDeps => ({
    hourly,
    dispatch,
    connections,
    data,
    tbank: { baseUrl: brokerageUrl, appName: 'holdings-test', rateWindowMs: 60_000, backoffMs: 10 },
    settings: { ...DEFAULT_SECTION_SETTINGS, historyDays: 20 },
    timeoutMs: 20_000,
    now: () => Date.now(),
    log: silentLogger,
  });

  return {
    aws,
    data,
    hourly,
    brokerage,
    get clock() {
      return state.clock;
    },
    async start() {
      brokerageUrl = await brokerage.listen();
      fakeDateOnly(state.clock);
    },
    async stop() {
      jest.useRealTimers();
      await brokerage.close();
      aws.dynamodb.destroy();
    },
    later(ms: number) {
      jest.setSystemTime((state.clock += ms));
    },
    connect(user: string) {
      // A token per user: the emulator's rate limits are per token.
      return connections.putConnection(user, `t.${user}`, Date.now());
    },
    /** One attempt of the user, every step run here to its end (the second phase too). */
    async sync(user: string) {
      const running: Promise<unknown>[] = [];
      const dispatch: Dispatch = async (input: StepInput) => void running.push(runStep(stepDeps(dispatch), input));
      const run = { run_id: newId(), run_deadline: Date.now() + 55_000 };
      const outcome = await tickUser(
        { hourly, connections, dispatch, now: () => Date.now(), log: silentLogger, run },
        user,
      );
      for (let n = -1; n !== running.length;) {
        n = running.length;
        await Promise.all(running);
      }
      return { outcome, head: (await hourly.head(user))! };
    },
  };
}
