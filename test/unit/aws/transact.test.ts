import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { transactWrite } from '../../../lib/aws/transact';
import { TransactionConflictError } from '../../../lib/aws/errors';
import { TransactionCancelledError } from '../../../lib/aws/errors';

/** The retry policy is pure logic over the SDK's answers: a scripted client is an honest stand-in here. */
function scripted(answers: Array<'ok' | { codes: string[]; item?: Record<string, unknown> }>) {
  const sent: unknown[] = [];
  const client = {
    send: async (command: { input: unknown }) => {
      sent.push(command.input);
      const answer = answers.shift();
      if (answer === 'ok' || answer === undefined) return {};
      throw new TransactionCanceledException({
        message: 'cancelled',
        $metadata: {},
        CancellationReasons: answer.codes.map((Code, i) => ({
          Code,
          Item: i === 1 && answer.item ? marshall(answer.item) : undefined,
        })),
      });
    },
  } as unknown as DynamoDBDocumentClient;
  return { client, sent };
}

const put = { Put: { TableName: 't', Item: { PK: 'a' }, ConditionExpression: 'attribute_not_exists(PK)' } };
const fast = { attempts: 4, baseDelayMs: 1, maxDelayMs: 2 };

describe('transactWrite', () => {
  it('retries a transaction cancelled only by TransactionConflict, then succeeds', async () => {
    const { client, sent } = scripted([
      { codes: ['TransactionConflict', 'None'] },
      { codes: ['None', 'TransactionConflict'] },
      'ok',
    ]);
    await transactWrite(client, [put, put], fast);
    expect(sent).toHaveLength(3);
  });

  it('gives up after the bounded number of attempts with a typed error', async () => {
    const { client, sent } = scripted(Array(10).fill({ codes: ['TransactionConflict'] }));
    await expect(transactWrite(client, [put], fast)).rejects.toBeInstanceOf(TransactionConflictError);
    expect(sent).toHaveLength(4);
  });

  it('never retries a failed condition, and hands back the holder of the item', async () => {
    const { client, sent } = scripted([
      { codes: ['None', 'ConditionalCheckFailed'], item: { PK: 'IH#x', download_id: 'owner' } },
    ]);
    const err = await transactWrite(client, [put, put], fast).catch((e) => e);
    expect(err).toBeInstanceOf(TransactionCancelledError);
    expect(err.failedConditions()).toEqual([1]);
    expect(err.reasons[1].item).toEqual({ PK: 'IH#x', download_id: 'owner' });
    expect(sent).toHaveLength(1);
  });

  it('asks for the old item on every conditional operation', async () => {
    const { client, sent } = scripted(['ok']);
    await transactWrite(client, [put, { Put: { TableName: 't', Item: { PK: 'b' } } }], fast);
    const items = (sent[0] as { TransactItems: Array<{ Put: Record<string, unknown> }> }).TransactItems;
    expect(items[0].Put.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
    expect(items[1].Put.ReturnValuesOnConditionCheckFailure).toBeUndefined();
  });
});

describe('transactWrite: idempotency and missing reasons', () => {
  it('sends one ClientRequestToken per call, the same on every resend, another for any other call', async () => {
    const sent: Array<{ ClientRequestToken?: string }> = [];
    let calls = 0;
    const client = {
      send: async (command: { input: { ClientRequestToken?: string } }) => {
        sent.push(command.input);
        if (calls++ === 0) throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        return {};
      },
    } as unknown as DynamoDBDocumentClient;
    await transactWrite(client, [put], { ...fast, operation: 'create:x' });
    expect(sent).toHaveLength(2);
    expect(sent[0].ClientRequestToken).toHaveLength(36);
    expect(sent[1].ClientRequestToken).toBe(sent[0].ClientRequestToken);
    // Another call with the very same items (a racing CAS) gets its own token: only one may win.
    await transactWrite(client, [put], { ...fast, operation: 'create:x' });
    expect(sent[2].ClientRequestToken).not.toBe(sent[0].ClientRequestToken);
  });

  it('reads the item consistently when the cancellation reason lacks it', async () => {
    const gets: unknown[] = [];
    const client = {
      send: async (command: { input: Record<string, unknown> }) => {
        if ('TransactItems' in command.input) {
          throw new TransactionCanceledException({
            message: 'cancelled',
            $metadata: {},
            CancellationReasons: [{ Code: 'ConditionalCheckFailed' }],
          });
        }
        gets.push(command.input);
        return { Item: { PK: 'a', holder: 'someone' } };
      },
    } as unknown as DynamoDBDocumentClient;
    const err = await transactWrite(client, [put], fast).catch((e) => e);
    expect(err.reasons).toEqual([{ code: 'ConditionalCheckFailed', item: { PK: 'a', holder: 'someone' } }]);
    expect(gets).toEqual([{ TableName: 't', Key: { PK: 'a' }, ConsistentRead: true }]);
  });
});
