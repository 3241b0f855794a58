import type { AdmitPolicy } from '../../../lib/sync/admission';

/** A small admission policy for the tick's unit tests (100 calls, hourly 10, first 40, half for first syncs), with overrides. */
export const policy = (over: Partial<AdmitPolicy> = {}): AdmitPolicy => ({
  calls: 100,
  hourlyCost: 10,
  firstCost: 40,
  firstShare: 0.5,
  msPerCall: 0,
  ...over,
});
