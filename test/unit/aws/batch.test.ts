import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { batchGetAll } from '../../../lib/aws/batch';
import { UnprocessedItemsError } from '../../../lib/aws/errors';

type GetInput = { RequestItems: Record<string, { Keys: Array<{ PK: string }>; ConsistentRead?: boolean }> };

/**
 * The retry policy is pure logic over the SDK's answers: a client that leaves
 * the first `unprocessed(call)` keys of each call unprocessed stands in for throttling.
 */
function throttled(unprocessed: (call: number, asked: number) => number) {
  const calls: GetInput[] = [];
  const client = {
    send: async (command: { input: GetInput }) => {
      calls.push(command.input);
      const keys = command.input.RequestItems.t.Keys;
      const left = Math.min(keys.length, unprocessed(calls.length, keys.length));
      return {
        Responses: { t: keys.slice(left).map((k) => ({ ...k, id: k.PK })) },
        UnprocessedKeys: left > 0 ? { t: { Keys: keys.slice(0, left) } } : {},
      };
    },
  } as unknown as DynamoDBDocumentClient;
  return { client, calls };
}

const keys = (n: number) => Array.from({ length: n }, (_, i) => ({ PK: `k${i}` }));
const fast = { attempts: 5, baseDelayMs: 1, maxDelayMs: 2 };

describe('batchGetAll', () => {
  it('asks 100 keys a call and re-asks only the unprocessed ones until every key is answered', async () => {
    const { client, calls } = throttled((call) => (call <= 2 ? 30 : 0));
    const items = await batchGetAll(client, 't', keys(250), { retry: fast, consistentRead: true });
    expect(items.map((i) => i.PK).sort()).toEqual(
      keys(250)
        .map((k) => k.PK)
        .sort(),
    );
    expect(calls.map((c) => c.RequestItems.t.Keys.length)).toEqual([100, 30, 30, 100, 50]);
    expect(calls.every((c) => c.RequestItems.t.ConsistentRead === true)).toBe(true);
  });

  it('gives up typed after its retry attempts instead of spinning on a throttled table', async () => {
    const { client, calls } = throttled(() => Infinity);
    const read = batchGetAll(client, 't', keys(3), { retry: fast });
    await expect(read).rejects.toThrow(UnprocessedItemsError);
    await expect(read).rejects.toThrow('BatchGetItem kept returning 3 unprocessed items');
    expect(calls).toHaveLength(fast.attempts);
  });

  it('sends nothing for no keys', async () => {
    const { client, calls } = throttled(() => 0);
    expect(await batchGetAll(client, 't', [])).toEqual([]);
    expect(calls).toHaveLength(0);
  });
});
