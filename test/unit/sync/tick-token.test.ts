import { newId } from '../../../lib/ident';
import { silentLogger } from '../../../lib/log';
import { newKeyringEntry, parseKeyring, SecretSealer } from '../../../lib/secrets/sealer';
import type { TokenSealer } from '../../../lib/secrets/token-sealer';
import { ConnectionService } from '../../../lib/sync/connections';
import { HourlyService } from '../../../lib/sync/service';
import { tick, type TickDeps } from '../../../lib/sync/tick';
import { MemorySyncStore } from './memory-sync-store';

/**
 * The tick decides whether a user can be synced from whether a token is
 * STORED, never by opening it: on AWS every open is a KMS Decrypt, and the
 * tick visiting every user each hour would decrypt every token only to check
 * that it opens. The step that calls T-Bank opens it (and fails the attempt
 * when it does not open); the tick's roles hold no key at all (serverless.yml).
 */

const T0 = Date.UTC(2026, 11, 3, 9, 0, 0);

it('visits every due user, dispatches their first phase, and opens no token', async () => {
  const keyring = new SecretSealer(parseKeyring(newKeyringEntry('unit')).keyring!);
  let opened = 0;
  const counting: TokenSealer = {
    ...keyring,
    seal: (p, c) => keyring.seal(p, c),
    opens: (s) => keyring.opens(s),
    isCurrent: (s) => keyring.isCurrent(s),
    open: async (sealed, context) => {
      opened++;
      return keyring.open(sealed, context);
    },
  };
  const store = new MemorySyncStore();
  const connections = new ConnectionService({ store, sealer: async () => counting });
  const users = [newId(), newId(), newId()];
  for (const user of users) await connections.putConnection(user, `tok.${user}`, T0);
  const dispatched: string[] = [];
  const deps: TickDeps = {
    hourly: new HourlyService({ store, waitBoundMs: 15 * 60_000 }),
    connections,
    dispatch: async (input) => void dispatched.push(input.user_id),
    now: () => T0,
    log: silentLogger,
    run: { run_id: newId(), run_deadline: T0 + 55_000 },
  };
  await tick(deps);
  expect(new Set(dispatched)).toEqual(new Set(users));
  expect(opened).toBe(0);
  // The token is still there to open, for the step.
  expect(await connections.hasToken(users[0])).toBe(true);
  expect(await connections.hasToken(newId())).toBe(false);
  expect(await connections.connectionToken(users[0])).toBe(`tok.${users[0]}`);
  expect(opened).toBe(1);
});
