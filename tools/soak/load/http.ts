import type { Recorder, UserPath } from '../metrics';

/**
 * One HTTP call of the soak to the service: bounded (a stopped process must
 * not hang the load), timed, every 5xx or missing answer recorded with its
 * time (the audit checks they all fall inside fault windows).
 */
export interface Answer {
  status: number;
  body: unknown;
  headers?: Headers;
}

export interface HttpDeps {
  base: string;
  token: string;
  recorder: Recorder;
  now: () => number;
}

export async function call(
  deps: HttpDeps,
  what: string,
  method: string,
  path: string,
  opts: { body?: unknown; form?: Record<string, string>; cookie?: string; timed?: UserPath } = {},
): Promise<Answer> {
  const began = deps.now();
  const headers: Record<string, string> = opts.cookie
    ? { cookie: opts.cookie }
    : { authorization: `Bearer ${deps.token}` };
  let body: string | undefined;
  if (opts.form) {
    headers['content-type'] = 'application/x-www-form-urlencoded';
    body = new URLSearchParams(opts.form).toString();
  } else if (opts.body !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  deps.recorder.count(what);
  try {
    const res = await fetch(deps.base + path, {
      method,
      headers,
      body,
      redirect: 'manual',
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // a page, not JSON
    }
    if (res.status >= 500) deps.recorder.serverError(what, res.status, began);
    else if (opts.timed) deps.recorder.sample(opts.timed, began, deps.now() - began);
    return { status: res.status, body: parsed, headers: res.headers };
  } catch {
    deps.recorder.serverError(what, 0, began);
    return { status: 0, body: undefined };
  }
}

/** When the load ends: moved earlier when the stack stopped itself (a service died for good). */
export interface Deadline {
  until: number;
}

/** Runs `step` every `everyMs` until the deadline; a step's failure is counted, never the end of the loop. */
export async function every(
  everyMs: number,
  deadline: Deadline,
  now: () => number,
  sleep: (ms: number) => Promise<void>,
  step: () => Promise<void>,
): Promise<void> {
  while (now() < deadline.until) {
    const began = now();
    await step().catch(() => undefined);
    // Never past the deadline: the drain starts when the load ends, not a step later.
    await sleep(Math.max(0, Math.min(everyMs - (now() - began), deadline.until - now())));
  }
}
