import { randomBytes } from 'node:crypto';
import { ulid } from 'ulid';
import { call, Deadline, every, HttpDeps } from './http';

/**
 * Brokerage connections saved through the API, a few at the start and one
 * more at a steady rate: each is due at once, so the minute tick (schedules
 * on) starts an attempt for it against the T-Bank emulator, whose faults the
 * chaos schedule switches on and off. The tokens are kept: none may appear in
 * any log.
 */

export interface Connection {
  user_id: string;
  token: string;
  at: number;
}

export async function syncLoad(
  deps: HttpDeps & { sleep: (ms: number) => Promise<void> },
  until: Deadline,
  opts = { initial: 3, everyMs: 60_000, max: 12 },
): Promise<Connection[]> {
  const connections: Connection[] = [];
  const connect = async () => {
    if (connections.length >= opts.max) return;
    const c = { user_id: ulid(), token: `t.soak${randomBytes(18).toString('base64url')}`, at: deps.now() };
    const answer = await call(deps, 'sync connect', 'POST', '/sync/connections', { body: c });
    if (answer.status === 201) connections.push(c);
  };
  for (let i = 0; i < opts.initial; i++) await connect();
  await every(opts.everyMs, until, deps.now, deps.sleep, connect);
  return connections;
}
