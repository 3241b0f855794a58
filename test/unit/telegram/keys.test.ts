import { failureFromItem, failureToItem } from '../../../lib/telegram/keys';

// Whatever an object carries beside its named fields never chooses an item's keys and is never stored.
describe('telegram items are built from named fields, keys last', () => {
  const hostile = { PK: 'EV#other', SK: 'CHAT#1', entity: 'delivery', extra: 'x' };
  it('a telegram failure', () => {
    const failure = {
      id: '01kbhd0000000000000000000b',
      event_id: 'e',
      chat_id: 1,
      download_id: '01kbhd0000000000000000000a',
      kind: 'failed',
      reason: 'r',
      failed_at: '2026-12-03T08:00:00.000Z',
    };
    const item = failureToItem({ ...failure, ...hostile } as typeof failure);
    expect(item).toEqual({ entity: 'failure', ...failure, PK: 'FAIL', SK: failure.id });
    expect(failureFromItem(item)).toEqual(failure);
  });
});
