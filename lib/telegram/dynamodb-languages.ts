import { DynamoDBDocumentClient, GetCommand, PutCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { isoTime } from '../clock';
import { isLang, type Lang } from '../i18n';
import { LANGUAGE_PARTITION, languageKey } from './keys';
import type { ChatLanguages } from './store';

/** Chats' languages in the telegram table (lib/telegram/keys.ts): one small item per chat that chose. */
export class DynamoChatLanguages implements ChatLanguages {
  constructor(private readonly opts: { documents: DynamoDBDocumentClient; table: string }) {}

  async languageOf(chatId: number): Promise<Lang | undefined> {
    const { Item } = await this.opts.documents.send(
      new GetCommand({ TableName: this.opts.table, Key: languageKey(chatId) }),
    );
    return isLang(Item?.lang) ? Item.lang : undefined;
  }

  async languages(): Promise<Map<number, Lang>> {
    const found = new Map<number, Lang>();
    let start: Record<string, unknown> | undefined;
    do {
      const page = await this.opts.documents.send(
        new QueryCommand({
          TableName: this.opts.table,
          KeyConditionExpression: 'PK = :p',
          ExpressionAttributeValues: { ':p': LANGUAGE_PARTITION },
          ExclusiveStartKey: start,
        }),
      );
      for (const item of page.Items ?? []) {
        const chat = Number(item.SK);
        // An item we cannot read is no choice: the chat speaks the default.
        if (Number.isSafeInteger(chat) && isLang(item.lang)) found.set(chat, item.lang);
      }
      start = page.LastEvaluatedKey;
    } while (start);
    return found;
  }

  async setLanguage(chatId: number, lang: Lang, by: number | undefined, now: number): Promise<void> {
    await this.opts.documents.send(
      new PutCommand({
        TableName: this.opts.table,
        // The key last: no field can choose it.
        Item: {
          entity: 'chat_language',
          lang,
          set_at: isoTime(now),
          ...(by !== undefined && Number.isSafeInteger(by) ? { set_by: by } : {}),
          ...languageKey(chatId),
        },
      }),
    );
  }
}
