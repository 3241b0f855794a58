import { DynamoDBDocumentClient, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { FieldSpec, pickFields, readItem } from '../util/item';
import type { CategoryRecord, CategoryRecordStore, ClientCategory } from './category';
import { CATEGORY_RECORD_KEY } from './keys';

const RECORD_FIELDS: FieldSpec<CategoryRecord> = { root: 'string', categories: 'array', at: 'string' };
const CATEGORY_FIELDS: FieldSpec<ClientCategory> = { name: 'string', save_path: 'string' };

/** The client's categories under ours, as last seen: one item, overwritten (the newest look wins). */
export class DynamoCategoryRecordStore implements CategoryRecordStore {
  constructor(private readonly opts: { documents: DynamoDBDocumentClient; table: string }) {}

  async record(record: CategoryRecord): Promise<void> {
    const item = {
      ...pickFields(RECORD_FIELDS, record),
      categories: record.categories.map((c) => pickFields(CATEGORY_FIELDS, c)),
    };
    await this.opts.documents.send(
      new PutCommand({ TableName: this.opts.table, Item: { ...item, entity: 'categories', ...CATEGORY_RECORD_KEY } }),
    );
  }

  async read(): Promise<CategoryRecord | undefined> {
    const { Item } = await this.opts.documents.send(
      new GetCommand({ TableName: this.opts.table, Key: CATEGORY_RECORD_KEY }),
    );
    if (!Item) return undefined;
    const record = readItem(RECORD_FIELDS, Item, 'categories');
    const categories = (record.categories as unknown[]).map((c) =>
      readItem(CATEGORY_FIELDS, (c ?? {}) as Record<string, unknown>, 'category'),
    );
    return { ...record, categories };
  }
}
