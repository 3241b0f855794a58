import { spawn } from 'node:child_process';
import { childEnv } from '../util/child-env';
import { smbcPrelude } from './smb-python';
import { AnswerNotReadyError, answerTooLarge, HotFolderUnavailableError } from './errors';

/**
 * An answer file read under the contract's exclusive open (decision 315): the file is opened with the share mode
 * deny-write, so a file the scanning system still holds open for writing is refused (the server answers a sharing
 * violation) instead of being read half-written. smbclient's `get` always opens deny-none and has no setting for
 * it; Samba's client library does (`smbc_setOptionOpenShareMode`, libsmbclient.h), so the read goes through it,
 * driven by the short Python program below over the standard library's ctypes: nothing to build, any port, and
 * the path given as data, never through smbclient's command parser (any character the share accepts).
 *
 * The request (share, path segments, credentials) arrives as one JSON line on stdin, never on a command line. The
 * file's bytes come back on stdout, never more than `max_bytes` (past them it stops and exits 5: the file is
 * refused, AnswerRefusedError); a refused open exits 3 with the errno's name on stderr. libsmbclient reports an
 * errno, not the NT status: SHARING_VIOLATION is EBUSY, a file gone since the listing ENOENT, DELETE_PENDING the
 * catch-all EINVAL (checked on Samba 4.17: libcli/util/errmap_unix.c has no entry for it). All three mean "not
 * settled yet, try at the next poll"; names the share cannot address are refused before (answerNameProblem).
 */

// The program after the shared opening (smb-python.ts): the open with the share mode, then the bounded read.
const PROGRAM =
  smbcPrelude({
    initFailedExit: 4,
    beforeInit: String.raw`lib.smbc_setOptionOpenShareMode.argtypes = [P, ctypes.c_int]
lib.smbc_setOptionOpenShareMode(ctx, 2)  # SMBC_SHAREMODE_DENY_WRITE`,
  }) +
  String.raw`lib.smbc_open.argtypes = [ctypes.c_char_p, ctypes.c_int, ctypes.c_uint]
lib.smbc_read.argtypes = [ctypes.c_int, P, ctypes.c_size_t]
lib.smbc_read.restype = ctypes.c_ssize_t
fd = lib.smbc_open(url.encode(), os.O_RDONLY, 0)
if fd < 0:
    print(errno.errorcode.get(ctypes.get_errno(), '?'), file=sys.stderr); sys.exit(3)
buf = ctypes.create_string_buffer(1 << 16)
left = a['max_bytes']
while True:
    n = lib.smbc_read(fd, buf, len(buf))
    if n < 0:
        print('read', errno.errorcode.get(ctypes.get_errno(), '?'), file=sys.stderr); sys.exit(4)
    if n == 0:
        break
    left -= n
    if left < 0:
        print('too large', file=sys.stderr); sys.exit(5)
    sys.stdout.buffer.write(buf.raw[:n])
`;

/** Open refused because the writer still holds the file (or it is going away): the answer has not settled. */
const NOT_SETTLED = new Set(['EBUSY', 'ENOENT', 'EINVAL']);

export interface ExclusiveReadTarget {
  host: string;
  port: number;
  share: string;
  /** Guest share: the empty name. */
  user: string;
  password: string;
  /** The file's path inside the share, one folder or name per element (any character but `/` and `\`). */
  path: string[];
}

export interface ExclusiveReadOptions {
  python: string;
  timeoutMs: number;
  /** More bytes than this: the read stops and the file is refused (SCAN_MAX_ANSWER_BYTES). */
  maxBytes: number;
  /** Variables added to the program's environment (lib/util/child-env.ts: never the whole of the process's). */
  env?: Record<string, string>;
}

/** The file's bytes, read under a deny-write open; AnswerNotReadyError while a writer holds it. */
export function readExclusive(target: ExclusiveReadTarget, options: ExclusiveReadOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn(options.python, ['-c', PROGRAM], {
      stdio: ['pipe', 'pipe', 'pipe'],
      // Never the process's secrets (decision 396); UTF-8 whatever the locale (the request's names).
      env: childEnv({ PYTHONUTF8: '1', ...options.env }),
    });
    const out: Buffer[] = [];
    let size = 0;
    let err = '';
    const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs + 2_000);
    child.stdout.on('data', (d: Buffer) => {
      size += d.length;
      // The program stops at the bound itself; this holds even if it did not.
      if (size > options.maxBytes) child.kill('SIGKILL');
      else out.push(d);
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString('utf8')));
    child.stdin.on('error', () => undefined); // a program that died early: its exit says why
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(new HotFolderUnavailableError(`the SMB reader could not start: ${e.message}`));
    });
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const reason = err.trim().split('\n').pop() ?? '';
      const name = target.path[target.path.length - 1];
      if (size > options.maxBytes || code === 5)
        reject(answerTooLarge(name, `more than ${options.maxBytes}`, options.maxBytes));
      else if (code === 0) resolve(Buffer.concat(out, size));
      else if (code === 3 && NOT_SETTLED.has(reason)) reject(new AnswerNotReadyError(`open refused (${reason})`));
      else reject(new HotFolderUnavailableError(`reading ${target.path.join('/')}: ${reason || signal || code}`));
    });
    const { host, port, share, user, password, path } = target;
    const request = {
      host,
      port,
      share,
      user,
      password,
      path,
      timeout_ms: options.timeoutMs,
      max_bytes: options.maxBytes,
    };
    child.stdin.end(`${JSON.stringify(request)}\n`);
  });
}

/**
 * Why the share cannot address an answer's name (MS-FSCC 2.1.5.2: `"` `*` `/` `:` `<` `>` `?` `\` `|` and
 * control characters are not valid in a file name), or undefined. Such a name reaches a listing only from a
 * server that shows raw names (Samba with `mangled names = no`); no open can name it.
 */
export function answerNameProblem(name: string): string | undefined {
  if (/[\\/]/.test(name)) return 'contains a path separator';
  if (/[\u0000-\u001f\u007f]/.test(name)) return 'contains a control character';
  if (/["*:<>?|]/.test(name)) return 'contains a character a share refuses in a name';
  if (name === '.' || name === '..') return 'is a relative folder name';
  return undefined;
}
