import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connect, nkeys } from 'nats';
import { freePort } from '../../tools/stack/ports';
import { RunningService } from '../../tools/stack/process';
import { startNatsServer } from '../../tools/stack/services';
import { loadNatsConfig } from '../../lib/config';
import { natsOptions } from '../../lib/nats/connection';

/** NATS credentials against real nats-server processes: the stack's (user/password) and one of our own (nkey). */
const login = (env: Record<string, string>) =>
  connect({ ...natsOptions(loadNatsConfig(env), 'auth-test'), timeout: 2000, maxReconnectAttempts: 0 });

describe('user/password (the stack runs its nats-server with a login)', () => {
  const url = () => process.env.NATS_URL!;

  it('connects with the stack credentials', async () => {
    const nc = await login({
      NATS_URL: url(),
      NATS_USER: process.env.NATS_USER!,
      NATS_PASSWORD: process.env.NATS_PASSWORD!,
    });
    await nc.flush();
    await nc.close();
  });

  it.each([
    ['no credentials', {}],
    ['a wrong password', { NATS_USER: 'stack', NATS_PASSWORD: 'wrong-password' }],
  ])('is refused with %s', async (_label, creds) => {
    await expect(login({ NATS_URL: url(), ...creds })).rejects.toThrow(/Authorization/i);
  });
});

describe('nkey', () => {
  const user = nkeys.createUser();
  let server: RunningService;
  let url: string;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nats-nkey-'));

  beforeAll(async () => {
    const port = await freePort();
    server = await startNatsServer({ root: dir, logDir: dir, say: () => undefined }, port, {
      nkey: user.getPublicKey(),
    });
    url = `nats://127.0.0.1:${port}`;
  });
  afterAll(async () => {
    await server?.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('connects by signing the server nonce with the seed', async () => {
    const nc = await login({ NATS_URL: url, NATS_NKEY_SEED: new TextDecoder().decode(user.getSeed()) });
    const sub = nc.subscribe('nkey.echo', { max: 1 });
    nc.publish('nkey.echo', 'hi');
    for await (const msg of sub) expect(msg.string()).toBe('hi');
    await nc.close();
  });

  it('is refused with another user seed, or none', async () => {
    await expect(
      login({ NATS_URL: url, NATS_NKEY_SEED: new TextDecoder().decode(nkeys.createUser().getSeed()) }),
    ).rejects.toThrow(/Authorization/i);
    await expect(login({ NATS_URL: url })).rejects.toThrow(/Authorization/i);
  });
});
