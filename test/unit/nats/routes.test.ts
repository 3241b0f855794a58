import { natsRoutes } from '../../../lib/nats/routes';
import { InvalidNatsEventError } from '../../../lib/nats/errors';

describe('natsRoutes', () => {
  it('takes every nats event of every function, with its queue group', () => {
    const routes = natsRoutes({
      a: {
        name: 'svc-dev-a',
        events: [{ nats: { subject: 'scan.requests', queue: 'scan-gateway' } }, { httpApi: {} }],
      },
      b: { name: 'svc-dev-b', events: [{ nats: { subject: 'health.>' } }] },
      c: { name: 'svc-dev-c' },
    });
    expect(routes).toEqual([
      { functionName: 'svc-dev-a', subject: 'scan.requests', queue: 'scan-gateway' },
      { functionName: 'svc-dev-b', subject: 'health.>', queue: undefined },
    ]);
  });

  it.each([
    ['no subject', { queue: 'q' }],
    ['empty token', { subject: 'scan..requests' }],
    ['white space', { subject: 'scan requests' }],
    ['queue with space', { subject: 's', queue: 'a b' }],
    ['null', null],
  ])('rejects %s', (_name, nats) => {
    expect(() => natsRoutes({ f: { name: 'svc-f', events: [{ nats }] } })).toThrow(InvalidNatsEventError);
  });
});
