import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { FieldSpec, pickFields, readItem } from '../util/item';
import type { DiskRecord, DiskRecordStore } from './disk-guard';
import { DISK_RECORD_KEY } from './keys';

const DISK_FIELDS: FieldSpec<DiskRecord> = {
  free_bytes: 'number',
  reserve_bytes: 'number',
  needed_bytes: 'number',
  held: 'number',
  at: 'string',
};

/** The poll's last look at the client's disk: one item, overwritten (a plain put: the newest look wins). */
export class DynamoDiskRecordStore implements DiskRecordStore {
  constructor(private readonly opts: { documents: DynamoDBDocumentClient; table: string }) {}

  async record(disk: DiskRecord): Promise<void> {
    await this.opts.documents.send(
      new PutCommand({
        TableName: this.opts.table,
        Item: { ...pickFields(DISK_FIELDS, disk), entity: 'disk', ...DISK_RECORD_KEY },
      }),
    );
  }

  async read(): Promise<DiskRecord | undefined> {
    const { Item } = await this.opts.documents.send(
      new GetCommand({ TableName: this.opts.table, Key: DISK_RECORD_KEY }),
    );
    return Item ? readItem(DISK_FIELDS, Item, 'disk') : undefined;
  }
}
