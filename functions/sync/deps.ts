import { asyncInvoker } from '../../lib/aws/invoke';
import { config } from '../../lib/config';
import type { AdmitPolicy } from '../../lib/sync/admission';
import { EGRESS_PACE } from '../../lib/sync/pacer';
import type { Dispatch } from '../../lib/sync/tick';
import { syncLog, syncServices } from '../../lib/sync/wiring';

/** What the sync functions add to the domain's services (lib/sync/wiring.ts): dispatch by async invocation. */

export const log = syncLog;

let wired:
  | (ReturnType<typeof syncServices> & {
      dispatch: Dispatch;
      fanOut?: (shard: number, quota?: number, firstQuota?: number) => Promise<void>;
      admit: AdmitPolicy;
      queuedMs: (now: number) => Promise<number>;
    })
  | undefined;

export function syncDeps() {
  if (!wired) {
    const services = syncServices();
    const { settings } = services;
    const invoke = asyncInvoker(config().region);
    wired = {
      ...services,
      // The calls already queued on the egress schedule come off the tick's budget.
      queuedMs: (now: number) => services.data.paceQueuedMs(EGRESS_PACE, now),
      // The step's row is its report.
      dispatch: (input) => invoke(settings.stepFunction, input),
      ...(settings.tickShardFunction
        ? {
            fanOut: (shard: number, quota?: number, firstQuota?: number) =>
              invoke(settings.tickShardFunction, { shard, quota, first_quota: firstQuota }),
          }
        : {}),
    };
  }
  return wired;
}
