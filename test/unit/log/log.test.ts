import { createLogger } from '../../../lib/log';

describe('createLogger', () => {
  it('writes one JSON line per event with base and child fields, errors by class name with their stack', () => {
    const lines: string[] = [];
    const log = createLogger({ component: 'x' }, { write: (l) => lines.push(l), now: () => 0, level: 'info' });
    log.child({ download_id: '01arz3ndektsv4rrffq69g5fav' }).warn('thing_failed', { err: new TypeError('boom') });
    log.debug('hidden');
    expect(lines).toHaveLength(1);
    expect(JSON.parse(lines[0])).toEqual({
      level: 'warn',
      time: '1970-01-01T00:00:00.000Z',
      event: 'thing_failed',
      component: 'x',
      download_id: '01arz3ndektsv4rrffq69g5fav',
      err: { name: 'TypeError', message: 'boom', stack: expect.stringMatching(/^TypeError: boom\n {4}at /) },
    });
  });
});
