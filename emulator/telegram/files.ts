import type http from 'node:http';
import { send } from './answer';
import { ApiError } from './objects';

/**
 * Files as the Bot API serves them to a bot: a document a person sends has a `file_id` (and a
 * `file_unique_id`); `getFile {file_id}` answers files.d.ts `File` `{file_id, file_unique_id, file_size,
 * file_path}`, and the bytes are at `GET /file/bot<token>/<file_path>`. Bots download files of up to 20 MB:
 * getFile on a larger one is refused "Bad Request: file is too big". An unknown file_id: "Bad Request: wrong
 * file_id or the file is temporarily unavailable"; a path or token that names no file: 404 "Not Found".
 *
 * For the tests of a bot that must not trust the sizes it is told, a file may be stored with a size that
 * lies (`declared`: what the message and getFile say) and served without a Content-Length (`chunked`).
 */

/** The Bot API's download bound. */
export const BOT_API_DOWNLOAD_BYTES = 20 * 1024 * 1024;

export interface StoredFile {
  file_id: string;
  file_unique_id: string;
  file_path: string;
  /** The bytes served; absent for a file over the bound (never downloadable, so never held). */
  bytes?: Buffer;
  /** The real size. */
  size: number;
  /** The size the message and getFile report (the real one unless a test makes it lie). */
  declared: number;
  chunked: boolean;
}

export class FileStore {
  private readonly byId = new Map<string, StoredFile>();
  private readonly byPath = new Map<string, StoredFile>();
  private next = 1;

  /** A document a person sends: `content` as given, or `size` zero bytes. */
  add(opts: { content?: Buffer; size?: number; declared?: number; chunked?: boolean; extension?: string }): StoredFile {
    const n = this.next++;
    const size = opts.content ? opts.content.length : Math.max(0, Math.floor(opts.size ?? 0));
    const ext = (opts.extension ?? 'torrent').replace(/[^A-Za-z0-9]/g, '').slice(0, 10) || 'dat';
    const file: StoredFile = {
      // Telegram's ids are opaque base64url strings; these only look like them.
      file_id: `BQACAgIAAxkBAAI${String(n).padStart(6, '0')}${Buffer.from(`emu-${n}`).toString('base64url')}`,
      file_unique_id: `AgAD${String(n).padStart(6, '0')}`,
      file_path: `documents/file_${n}.${ext}`,
      bytes: size > BOT_API_DOWNLOAD_BYTES ? undefined : (opts.content ?? Buffer.alloc(size)),
      size,
      declared: opts.declared ?? size,
      chunked: opts.chunked ?? false,
    };
    this.byId.set(file.file_id, file);
    this.byPath.set(file.file_path, file);
    return file;
  }

  /** getFile (methods.d.ts `getFile`): the File, its path valid for downloading. */
  getFile(fileId: unknown) {
    if (typeof fileId !== 'string' || fileId === '') throw new ApiError(400, 'Bad Request: invalid file_id');
    const file = this.byId.get(fileId);
    if (!file) throw new ApiError(400, 'Bad Request: wrong file_id or the file is temporarily unavailable');
    if (file.size > BOT_API_DOWNLOAD_BYTES) throw new ApiError(400, 'Bad Request: file is too big');
    return {
      file_id: file.file_id,
      file_unique_id: file.file_unique_id,
      file_size: file.declared,
      file_path: file.file_path,
    };
  }

  /** GET /file/bot<token>/<file_path>: the bytes, or the Bot API's 404. */
  serve(tokenOk: boolean, path: string, res: http.ServerResponse): void {
    const file = tokenOk ? this.byPath.get(path) : undefined;
    if (!file?.bytes) return send(res, 404, { ok: false, error_code: 404, description: 'Not Found' });
    const headers: Record<string, string> = { 'content-type': 'application/octet-stream' };
    if (!file.chunked) headers['content-length'] = String(file.bytes.length);
    res.writeHead(200, headers);
    // In pieces, as a network delivers it: a reader that stops at its bound stops early.
    const piece = 64 * 1024;
    for (let at = 0; at < file.bytes.length; at += piece) res.write(file.bytes.subarray(at, at + piece));
    res.end();
  }
}
