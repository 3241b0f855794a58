import { isApiCode } from './errors';

/**
 * The emulator's fault knobs, by tests and by hand (`PUT /emulator/faults`, `DELETE /emulator/faults`):
 *   {"<Service>/<Method>" | "<Service>" | "*": {"latencyMs": 200, "hang": true,
 *     "error": 40003 | 40002 | 50004 | 70001 | 70002 | 30001 | 30238 | 12002, "storm": true (every call 429),
 *     "resetSeconds": 1 (the storm's x-ratelimit-reset instead of the token window's),
 *     "html": true (a 502 HTML page), "truncate": true, "badEnum": true, "badMoney": true,
 *     "inject": {"PK": "…"} (extra fields in every item), "times": 2 (the fault applies to the next 2 calls only),
 *     "tokens": ["t.…"] (the fault applies to these tokens' calls only: one account's storm beside healthy ones)},
 *    "changeIds": true (operation ids change between two reads),
 *    "denyAccounts": ["<account id>"] (40002 on that account's methods: a single-account token)}
 */

export interface Fault {
  latencyMs?: number;
  hang?: boolean;
  error?: number;
  storm?: boolean;
  html?: boolean;
  truncate?: boolean;
  badEnum?: boolean;
  badMoney?: boolean;
  /** Extra fields merged into every object of the answer's lists (and its `instrument`): hostile upstream data. */
  inject?: Record<string, unknown>;
  times?: number;
  tokens?: string[];
  resetSeconds?: number;
}

export type Faults = Record<string, Fault> & { changeIds?: boolean; denyAccounts?: string[] };

/** True when a fault's `error` is no code of the official table (errors.ts): the emulator refuses such faults. */
export function namesUnknownCode(faults: Faults): boolean {
  return Object.values(faults).some(
    (f) => !!f && typeof f === 'object' && !Array.isArray(f) && f.error !== undefined && !isApiCode(f.error),
  );
}

export const BAD_GATEWAY_HTML =
  '<html><head><title>502 Bad Gateway</title></head><body><center><h1>502 Bad Gateway</h1></center></body></html>';

/** The fault for this call (the method's, else the service's, else `*`, each only for its `tokens`), counting down `times`. */
export function takeFault(faults: Faults, name: string, service: string, token?: string): Fault {
  for (const key of [name, service, '*']) {
    const fault = faults[key];
    if (!fault || typeof fault !== 'object') continue;
    if (Array.isArray(fault.tokens) && !(token !== undefined && fault.tokens.includes(token))) continue;
    if (fault.times !== undefined) {
      if (fault.times <= 0) continue;
      fault.times--;
    }
    return fault;
  }
  return {};
}

/** The answer as the fault spoils it: injected fields, an enum value from the future, nanos out of range. */
export function spoiled(answer: unknown, fault: Fault): unknown {
  if (fault.inject) answer = injected(answer as Record<string, unknown>, fault.inject);
  if (fault.badEnum)
    answer = JSON.parse(
      JSON.stringify(answer).replace(
        /"(ACCOUNT_STATUS|OPERATION_TYPE|OPERATION_STATE|EVENT_TYPE|INSTRUMENT_TYPE)_[A-Z_]+"/,
        '"$1_FROM_THE_FUTURE"',
      ),
    );
  if (fault.badMoney) answer = JSON.parse(JSON.stringify(answer).replace(/"nano":\s*-?\d+/g, '"nano":1000000000'));
  return answer;
}

function injected(answer: Record<string, unknown>, extra: Record<string, unknown>): Record<string, unknown> {
  const merge = (item: unknown) => (item && typeof item === 'object' ? { ...(item as object), ...extra } : item);
  const out: Record<string, unknown> = { ...answer };
  for (const [key, value] of Object.entries(answer)) {
    if (Array.isArray(value)) out[key] = value.map(merge);
    else if (key === 'instrument') out[key] = merge(value);
  }
  return out;
}
