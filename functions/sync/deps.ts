import { asyncInvoker } from '../../lib/aws/invoke';
import { config } from '../../lib/config';
import { admissionsPerMinute } from '../../lib/sync/rate-budget';
import type { Dispatch } from '../../lib/sync/tick';
import { syncLog, syncServices } from '../../lib/sync/wiring';

/** What the sync functions add to the domain's services (lib/sync/wiring.ts): dispatch by async invocation. */

export const log = syncLog;

let wired:
  | (ReturnType<typeof syncServices> & {
      dispatch: Dispatch;
      fanOut?: (shard: number, quota?: number) => Promise<void>;
      admit: number;
    })
  | undefined;

export function syncDeps() {
  if (!wired) {
    const services = syncServices();
    const { settings } = services;
    const invoke = asyncInvoker(config().region);
    wired = {
      ...services,
      // The attempts one minute's tick may start: the egress budget over one sync's calls.
      admit: admissionsPerMinute(settings.tbankEgressAddresses, settings.callsPerSync),
      // The step's row is its report.
      dispatch: (input) => invoke(settings.stepFunction, input),
      ...(settings.tickShardFunction
        ? { fanOut: (shard: number, quota?: number) => invoke(settings.tickShardFunction, { shard, quota }) }
        : {}),
    };
  }
  return wired;
}
