import { headers, NatsConnection } from 'nats';
import { setTimeout as sleep } from 'node:timers/promises';
import { Invoke, startBridge } from '../../lib/nats/bridge';
import { NatsEvent } from '../../lib/nats/event';
import { silentLogger } from '../../lib/log';
import { newId } from '../../lib/ident';
import { stackNats } from '../support/stack';

/** The bridge against the real nats-server, with a recording invoker in place of Lambda. */
describe('NATS bridge on nats-server', () => {
  let nc: NatsConnection;
  beforeAll(async () => {
    nc = await stackNats();
  });
  afterAll(() => nc.close());

  const until = async (cond: () => boolean, ms = 5000) => {
    const end = Date.now() + ms;
    while (!cond() && Date.now() < end) await sleep(20);
  };

  it('delivers each message ONCE across bridges sharing a queue group, with subject, headers and reply', async () => {
    const subject = `test.${newId()}`;
    const seen: Array<{ bridge: number; event: NatsEvent }> = [];
    const recorder =
      (bridge: number): Invoke =>
      async (_fn, event) =>
        void seen.push({ bridge, event });
    const route = { functionName: 'svc-test-fn', subject, queue: 'workers' };
    const bridges = [0, 1, 2].map((i) => startBridge(nc, [route], recorder(i), silentLogger));
    await nc.flush();

    const h = headers();
    h.set('Nats-Msg-Id', 'm-1');
    for (let i = 0; i < 30; i++) nc.publish(subject, JSON.stringify({ i }), { headers: h, reply: 'inbox.x' });
    await until(() => seen.length >= 30);
    await sleep(200); // a duplicate would arrive in this window
    await Promise.all(bridges.map((b) => b.stop()));

    expect(seen).toHaveLength(30);
    expect(seen.map((s) => JSON.parse(s.event.data).i).sort((a, b) => a - b)).toEqual([...Array(30).keys()]);
    expect(seen[0].event).toMatchObject({
      source: 'nats',
      subject,
      reply: 'inbox.x',
      headers: { 'Nats-Msg-Id': ['m-1'] },
    });
  });

  it('keeps the subscription alive when an invoke fails', async () => {
    const subject = `test.${newId()}`;
    const delivered: string[] = [];
    const flaky: Invoke = async (_fn, event) => {
      if (event.data === 'bad') throw new Error('lambda said 500');
      delivered.push(event.data);
    };
    const bridge = startBridge(nc, [{ functionName: 'f', subject }], flaky, silentLogger);
    await nc.flush();
    for (const data of ['one', 'bad', 'two']) nc.publish(subject, data);
    await until(() => delivered.length >= 2);
    await bridge.stop();
    expect(delivered).toEqual(['one', 'two']);
  });

  it('drops an oversize message and outlives a hung invoke: the next message still goes through', async () => {
    const subject = `test.${newId()}`;
    const delivered: string[] = [];
    const invoke: Invoke = async (_fn, event, signal) => {
      if (event.data === 'hang') return new Promise<void>(() => undefined); // never settles, ignores the signal
      delivered.push(event.data.slice(0, 10));
      expect(signal).toBeDefined();
    };
    const bridge = startBridge(nc, [{ functionName: 'f', subject, queue: 'workers' }], invoke, silentLogger, {
      maxBytes: 1024,
      invokeTimeoutMs: 300,
    });
    await nc.flush();
    nc.publish(subject, 'x'.repeat(1025));
    nc.publish(subject, 'hang');
    nc.publish(subject, '{not json');
    nc.publish(subject, 'after');
    await until(() => delivered.length >= 2);
    await bridge.stop();
    expect(delivered).toEqual(['{not json', 'after']);
  });

  it('never runs more than maxInFlight invokes at once, and stop() drains: every delivered message is still invoked', async () => {
    const subject = `test.${newId()}`;
    let running = 0;
    let peak = 0;
    const done: string[] = [];
    const slow: Invoke = async (_fn, event) => {
      peak = Math.max(peak, ++running);
      await sleep(20);
      running--;
      done.push(event.data);
    };
    const bridge = startBridge(nc, [{ functionName: 'f', subject }], slow, silentLogger, { maxInFlight: 3 });
    await nc.flush();
    for (let i = 0; i < 40; i++) nc.publish(subject, String(i));
    await nc.flush();
    await until(() => done.length >= 5);
    expect(bridge.stats().inFlight).toBeLessThanOrEqual(3);
    await bridge.stop();
    expect(peak).toBe(3);
    expect(done.map(Number).sort((a, b) => a - b)).toEqual([...Array(40).keys()]);
    expect(bridge.stats()).toMatchObject({ inFlight: 0, invoked: 40, failed: 0 });
  });
});
