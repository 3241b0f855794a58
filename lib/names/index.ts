import { DomainError } from '../errors';
/**
 * Names that become files or keys, in ONE place: scan file names, download
 * names (the torrent client saves under them) and S3 object keys.
 * `validateName` refuses what could escape a directory, hide a file or name a
 * device; `inboxName` turns a valid name into one a Windows/SMB share accepts;
 * `validateObjectKey` refuses keys that would escape a prefix on a file-backed store.
 */

export class InvalidFileNameError extends DomainError {
  readonly code = 'INVALID_NAME';
  readonly status = 400;
  constructor(reason: string) {
    super(`invalid file name: ${reason}`);
  }
}

export const MAX_INBOX_NAME_BYTES = 240;
const MAX_NAME_BYTES = 1024;

export function validateName(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw new InvalidFileNameError('empty');
  if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES)
    throw new InvalidFileNameError(`longer than ${MAX_NAME_BYTES} bytes`);
  if (name.includes('\0')) throw new InvalidFileNameError('contains NUL');
  if (/[/\\]/.test(name)) throw new InvalidFileNameError('contains a path separator');
  if (name.startsWith('.')) throw new InvalidFileNameError('starts with a dot');
  if (/^[A-Za-z]:/.test(name)) throw new InvalidFileNameError('names a drive');
  if (/[\u0000-\u001f\u007f]/.test(name)) throw new InvalidFileNameError('contains a control character');
  // A lone surrogate has no UTF-8 form: stored, it would fail on every later write or read.
  if (LONE_SURROGATE.test(name)) throw new InvalidFileNameError('contains a lone surrogate (not valid Unicode)');
  if (WILDCARD.test(name)) throw new InvalidFileNameError('contains a wildcard character (* or ?)');
  if (WINDOWS_DEVICE.test(name)) throw new InvalidFileNameError('is a reserved Windows device name');
  return name;
}

export const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

// `*` and `?`: a share or a client's glob would match other files with them. The DOS-only wildcards `<` `>` `"`
// stay allowed in a name (people write them; the UI and the bot escape them) and become `_` in an inbox name.
const WILDCARD = /[*?]/;

// CON, PRN, AUX, NUL, CONIN$, CONOUT$, COM0-9, LPT0-9 (and ¹²³), with or without an extension: Windows opens the
// device. Windows drops spaces and dots after the stem before it compares (`CON .txt`, `nul. .tar.gz`).
const WINDOWS_DEVICE = /^(con|prn|aux|nul|conin\$|conout\$|com[0-9¹²³]|lpt[0-9¹²³])[. ]*(\.[^.]*)*[. ]*$/i;

export class InvalidObjectKeyError extends DomainError {
  readonly code = 'INVALID_OBJECT_KEY';
  readonly status = 400;
  constructor(reason: string) {
    super(`invalid object key: ${reason}`);
  }
}

const MAX_KEY_BYTES = 1024;

/** An S3 key made of relative segments: no leading `/`, no `.`/`..` or empty segment, no control characters. */
export function validateObjectKey(key: unknown): string {
  if (typeof key !== 'string' || key.length === 0) throw new InvalidObjectKeyError('empty');
  if (Buffer.byteLength(key, 'utf8') > MAX_KEY_BYTES)
    throw new InvalidObjectKeyError(`longer than ${MAX_KEY_BYTES} bytes`);
  if (/[\u0000-\u001f\u007f\\]/.test(key))
    throw new InvalidObjectKeyError('contains a control character or a backslash');
  if (key.startsWith('/')) throw new InvalidObjectKeyError('is absolute');
  if (key.split('/').some((segment) => segment === '' || segment === '.' || segment === '..')) {
    throw new InvalidObjectKeyError('has an empty, `.` or `..` segment');
  }
  return key;
}

/** An extension is kept whole through shortening only up to this many characters (after the dot). */
export const MAX_KEPT_EXTENSION = 16;

/**
 * What an inbox name refuses, and nothing more (the scan seed's rule 29): an
 * empty name and a path separator (a name that would say where it goes).
 * Everything else a user may put in a file name (`Что это?.pdf`, `Отчёт:
 * 2024.pdf`, `CON.pdf`, `.Отчёт.pdf`, a NUL) is rewritten by `inboxName`,
 * never a reason to fail a job: the job id prefix already keeps the name from
 * being a device, a drive or a hidden file; NUL is a control character like
 * the others, and leading dots become `_` (decision 369).
 */
export function validateInboxSource(name: unknown): string {
  if (typeof name !== 'string' || name.length === 0) throw new InvalidFileNameError('empty');
  if (/[/\\]/.test(name)) throw new InvalidFileNameError('contains a path separator');
  return name;
}

/** Characters a Windows/SMB share refuses in a name (and lone surrogates, which have no UTF-8 form): each becomes `_`. */
const SHARE_INVALID =
  /[:<>"|?*\u0000-\u001f\u007f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * `<job_id>_<name>` made safe for the share: characters invalid on Windows/SMB
 * (`: < > " | ? *`, control characters; lone surrogates) become `_`, trailing
 * dots and spaces go, and the result is cut, by whole code points, to
 * `maxBytes` of UTF-8, keeping an extension of at most MAX_KEPT_EXTENSION
 * characters. The caller's budget must leave room for whatever it appends on
 * the way (a temp suffix), since the longest name it writes is the one that
 * must fit the file system. Refuses only what `validateInboxSource` refuses.
 */
export function inboxName(jobId: string, name: string, maxBytes = MAX_INBOX_NAME_BYTES): string {
  validateInboxSource(name);
  // Leading dots become `_` too: the OCR system names its answer after the input, and a dot file in Output/ is
  // ignored as a write in progress (hotfolder.ts), so `.x.pdf` would never be answered.
  const cleaned = `${jobId}_${name.replace(/^\.+/, (dots) => '_'.repeat(dots.length))}`
    .replace(SHARE_INVALID, '_')
    .replace(/[. ]+$/, '');
  if (Buffer.byteLength(cleaned, 'utf8') <= maxBytes) return cleaned;
  const dot = cleaned.lastIndexOf('.');
  const extLength = dot > jobId.length ? [...cleaned.slice(dot + 1)].length : 0;
  const ext = extLength >= 1 && extLength <= MAX_KEPT_EXTENSION ? cleaned.slice(dot) : '';
  const room = maxBytes - Buffer.byteLength(ext, 'utf8');
  if (room <= jobId.length + 1) throw new InvalidFileNameError('no room for the name');
  return truncateUtf8(cleaned.slice(0, cleaned.length - ext.length), room).replace(/[. ]+$/, '') + ext;
}

/** The longest prefix of `text` within `bytes` bytes of UTF-8, never splitting a character. */
function truncateUtf8(text: string, bytes: number): string {
  let out = '';
  let used = 0;
  for (const ch of text) {
    const size = Buffer.byteLength(ch, 'utf8');
    if (used + size > bytes) break;
    out += ch;
    used += size;
  }
  return out;
}
