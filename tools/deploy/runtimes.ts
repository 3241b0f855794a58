/**
 * Lambda's Node.js runtimes and their deprecation dates, so that the template
 * checks refuse a runtime AWS has deprecated or will deprecate within
 * RUNTIME_NOTICE_DAYS of the check, instead of `serverless deploy` failing on
 * the day AWS blocks updates (as nodejs20.x did on 2026-09-30).
 *
 * Source: the "Lambda runtimes" page of the AWS Lambda Developer Guide
 * (supported and deprecated runtimes tables), read on RUNTIMES_CHECKED.
 * Re-read it when a date here comes within the notice window: the check then
 * fails and names the runtime. A runtime missing from the table is refused too.
 */

export interface RuntimeDates {
  /** Deprecation: no more security patches; the check refuses from RUNTIME_NOTICE_DAYS before it. */
  deprecation: string;
  /** Lambda refuses to create functions with it. */
  blockCreate: string;
  /** Lambda refuses to update functions with it. */
  blockUpdate: string;
}

export const RUNTIMES_CHECKED = '2026-12-04';
export const RUNTIME_NOTICE_DAYS = 90;

export const LAMBDA_RUNTIMES: Record<string, RuntimeDates> = {
  'nodejs18.x': { deprecation: '2025-09-01', blockCreate: '2026-02-03', blockUpdate: '2026-03-09' },
  'nodejs20.x': { deprecation: '2026-04-30', blockCreate: '2026-08-31', blockUpdate: '2026-09-30' },
  'nodejs22.x': { deprecation: '2027-04-30', blockCreate: '2027-06-01', blockUpdate: '2027-07-01' },
  'nodejs24.x': { deprecation: '2028-04-30', blockCreate: '2028-06-01', blockUpdate: '2028-07-01' },
};

const DAY_MS = 86_400_000;

/** Why `runtime` may not be deployed on `today` (YYYY-MM-DD), or undefined when it may. */
export function runtimeRefusal(
  runtime: string,
  today: string,
  table: Record<string, RuntimeDates> = LAMBDA_RUNTIMES,
): string | undefined {
  const dates = Object.hasOwn(table, runtime) ? table[runtime] : undefined;
  if (!dates)
    return `${runtime} is not in the runtime table (tools/deploy/runtimes.ts, checked ${RUNTIMES_CHECKED}): add it with its dates`;
  const days = Math.floor((Date.parse(dates.deprecation) - Date.parse(today)) / DAY_MS);
  const when = `deprecated ${dates.deprecation}, creation blocked ${dates.blockCreate}, updates blocked ${dates.blockUpdate}`;
  if (days <= 0) return `${runtime} is deprecated (${when})`;
  if (days <= RUNTIME_NOTICE_DAYS) return `${runtime} is deprecated in ${days} days (${when}): move to a newer runtime`;
  return undefined;
}
