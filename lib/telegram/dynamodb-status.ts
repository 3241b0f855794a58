import { DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { conditionFailed } from '../aws/conditions';
import { isoTime } from '../clock';
import { sequenceKey, statusKey } from './keys';
import type { StatusMessage, StatusStore } from './store';

/**
 * The status messages (store.ts StatusStore) in the telegram table: one item per download and configured chat
 * (keys.ts `statusKey`). Every write is conditional: the opening claim on its absence (or a dead holder's
 * lease), the message on "none yet, or the one it replaces", the sequence on "only forward".
 */
export class DynamoStatusStore implements StatusStore {
  private readonly documents: DynamoDBDocumentClient;
  private readonly table: string;

  constructor(opts: { documents: DynamoDBDocumentClient; table: string }) {
    this.documents = opts.documents;
    this.table = opts.table;
  }

  async status(downloadId: string, chatId: number): Promise<StatusMessage | undefined> {
    const { Item } = await this.documents.send(
      new GetCommand({ TableName: this.table, Key: statusKey(downloadId, chatId), ConsistentRead: true }),
    );
    if (!Item) return undefined;
    const num = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);
    const title = Item.title === 'adopted' || Item.title === 'created' ? Item.title : 'status';
    return {
      downloadId,
      chatId,
      title,
      ...(num(Item.message_id) !== undefined ? { messageId: num(Item.message_id) } : {}),
      ...(num(Item.target) !== undefined ? { target: num(Item.target) } : {}),
      ...(typeof Item.sequence === 'string' ? { sequence: Item.sequence } : {}),
      ...(typeof Item.owner === 'string' ? { owner: Item.owner } : {}),
      ...(num(Item.lease_until) !== undefined ? { leaseUntil: num(Item.lease_until) } : {}),
    };
  }

  async claimOpening(
    downloadId: string,
    chatId: number,
    owner: string,
    now: number,
    leaseUntil: number,
  ): Promise<boolean> {
    try {
      await this.documents.send(
        new PutCommand({
          TableName: this.table,
          Item: {
            entity: 'status',
            download_id: downloadId,
            chat_id: chatId,
            title: 'status',
            owner,
            lease_until: leaseUntil,
            claimed_at: isoTime(now),
            ...statusKey(downloadId, chatId),
          },
          ConditionExpression: 'attribute_not_exists(PK) OR (attribute_not_exists(message_id) AND lease_until < :now)',
          ExpressionAttributeValues: { ':now': now },
        }),
      );
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  async opened(
    m: Required<Pick<StatusMessage, 'downloadId' | 'chatId' | 'target' | 'messageId' | 'sequence' | 'title'>>,
    replaces?: number,
  ): Promise<boolean> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: statusKey(m.downloadId, m.chatId),
          UpdateExpression:
            'SET entity = :e, download_id = :d, chat_id = :c, message_id = :m, target = :t, #seq = :s, title = :ti REMOVE #o, lease_until',
          ConditionExpression: replaces === undefined ? 'attribute_not_exists(message_id)' : 'message_id = :replaces',
          ExpressionAttributeNames: { '#seq': 'sequence', '#o': 'owner' },
          ExpressionAttributeValues: {
            ':e': 'status',
            ':d': m.downloadId,
            ':c': m.chatId,
            ':m': m.messageId,
            ':t': m.target,
            ':s': sequenceKey(m.sequence),
            ':ti': m.title,
            ...(replaces === undefined ? {} : { ':replaces': replaces }),
          },
        }),
      );
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }

  async shown(downloadId: string, chatId: number, messageId: number, sequence: string): Promise<boolean> {
    try {
      await this.documents.send(
        new UpdateCommand({
          TableName: this.table,
          Key: statusKey(downloadId, chatId),
          UpdateExpression: 'SET #seq = :s',
          ConditionExpression: 'message_id = :m AND (attribute_not_exists(#seq) OR #seq < :s)',
          ExpressionAttributeNames: { '#seq': 'sequence' },
          ExpressionAttributeValues: { ':s': sequenceKey(sequence), ':m': messageId },
        }),
      );
      return true;
    } catch (err) {
      if (conditionFailed(err)) return false;
      throw err;
    }
  }
}
