import { type Api, GrammyError, HttpError } from 'grammy';
import { TelegramFileError, TelegramFileTooBigError } from './errors';

/**
 * A document a person sent, fetched as the Bot API documents it: `getFile(file_id)` answers a File with its
 * `file_path`, and the bytes are at `<root>/file/bot<token>/<file_path>` (a link valid for at least an hour;
 * bots download files of up to 20 MB). The bound is checked three times: the size the message declares and
 * the one getFile answers, both before a byte is read, and the bytes actually read (a server that says less
 * than it sends, or says nothing, is cut at the bound).
 */

/** The Bot API's download bound ("bots can download files of up to 20MB in size"). */
export const BOT_API_DOWNLOAD_BYTES = 20 * 1024 * 1024;

/** What Telegram puts in a file_path (`documents/file_12.torrent`); anything else is not followed. */
const FILE_PATH = /^(?!.*(?:^|\/)\.\.?(?:\/|$))[A-Za-z0-9_.-]+(?:\/[A-Za-z0-9_.-]+)*$/;

/**
 * The root of file links: the one grammY sends the bot's methods to (TELEGRAM_API_ROOT, else grammY's own
 * default), learnt from grammY's URL builder, so the file comes from where getFile was answered and no root is
 * written here (decision 411). Install `buildUrl` in the client's options.
 */
export class FileLinks {
  private learnt?: string;

  constructor(private readonly configured?: string) {}

  /** grammY's default URL builder (core/client.ts `defaultBuildUrl`), remembering the root it is given. */
  readonly buildUrl = (root: string, token: string, method: string, env: 'prod' | 'test'): string => {
    this.learnt = root;
    return `${root}/bot${token}/${env === 'test' ? 'test/' : ''}${method}`;
  };

  url(token: string, filePath: string): string {
    const root = this.configured?.replace(/\/$/, '') ?? this.learnt;
    if (!root) throw new TelegramFileError('no Bot API root known yet');
    if (!FILE_PATH.test(filePath)) throw new TelegramFileError('getFile answered a file_path we do not follow');
    return `${root}/file/bot${token}/${filePath}`;
  }
}

export interface FileFetchDeps {
  api: Api;
  token: string;
  links: FileLinks;
  timeoutMs: number;
  /** The download's fetch (tests); the global one by default. */
  fetch?: typeof fetch;
}

/** The document's bytes, at most `limit` of them; `declaredSize` is the message's `document.file_size`. */
export async function fetchDocument(
  deps: FileFetchDeps,
  fileId: string,
  declaredSize: number | undefined,
  limit: number,
): Promise<Buffer> {
  if (declaredSize !== undefined && declaredSize > limit) throw new TelegramFileTooBigError(limit);
  let file;
  try {
    file = await deps.api.getFile(fileId);
  } catch (err) {
    if (err instanceof GrammyError && /file is too big/i.test(err.description))
      throw new TelegramFileTooBigError(limit);
    if (err instanceof GrammyError) throw new TelegramFileError(`getFile: ${err.error_code} ${err.description}`);
    if (err instanceof HttpError) throw new TelegramFileError('getFile: no answer');
    throw err;
  }
  if (file.file_size !== undefined && file.file_size > limit) throw new TelegramFileTooBigError(limit);
  if (!file.file_path) throw new TelegramFileError('getFile answered no file_path');
  const url = deps.links.url(deps.token, file.file_path);
  let res: Response;
  try {
    res = await (deps.fetch ?? fetch)(url, { signal: AbortSignal.timeout(deps.timeoutMs), redirect: 'error' });
  } catch {
    // The error may carry the link, and the link carries the token: neither goes further.
    throw new TelegramFileError('the file download got no answer');
  }
  if (!res.ok || !res.body) {
    await res.body?.cancel().catch(() => undefined);
    throw new TelegramFileError(`the file download answered ${res.status}`);
  }
  const length = Number(res.headers.get('content-length') ?? NaN);
  if (length > limit) {
    await res.body.cancel().catch(() => undefined);
    throw new TelegramFileTooBigError(limit);
  }
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > limit) {
        await reader.cancel().catch(() => undefined);
        throw new TelegramFileTooBigError(limit);
      }
      chunks.push(value);
    }
  } catch (err) {
    if (err instanceof TelegramFileTooBigError) throw err;
    throw new TelegramFileError('the file download broke off');
  }
  return Buffer.concat(chunks);
}
