/**
 * The opening of the Python programs that drive libsmbclient over the standard library's ctypes (smb-read.ts:
 * the exclusive read; smb-notify.ts: the change watcher), run as `python3 -c` so the handlers' bundles carry
 * them. It reads the program's arguments as one JSON line on stdin (`a`), makes and logs in a context for
 * `a.user`/`a.password` on `a.port` bounded by `a.timeout_ms`, and builds `url` from `a.host`, `a.share` and
 * `a.path` (each part percent-encoded). `beforeInit` sets the program's own context options; a context that
 * cannot be made exits `initFailedExit` with `init <errno>` on stderr.
 */
export function smbcPrelude(options: { initFailedExit: number; beforeInit?: string }): string {
  return String.raw`
import ctypes, errno, json, os, sys, urllib.parse
a = json.loads(sys.stdin.readline())
lib = ctypes.CDLL('libsmbclient.so.0', use_errno=True)
P = ctypes.c_void_p
lib.smbc_new_context.restype = P
lib.smbc_init_context.restype = P
lib.smbc_init_context.argtypes = [P]
lib.smbc_set_context.argtypes = [P]
lib.smbc_setPort.argtypes = [P, ctypes.c_uint16]
lib.smbc_setTimeout.argtypes = [P, ctypes.c_int]
lib.smbc_setOptionDebugToStderr.argtypes = [P, ctypes.c_int]
AUTH = ctypes.CFUNCTYPE(None, ctypes.c_char_p, ctypes.c_char_p, P, ctypes.c_int, P, ctypes.c_int, P, ctypes.c_int)
def fill(dst, size, value):
    v = value.encode()[: size - 1] + b'\0'
    ctypes.memmove(dst, v, len(v))
@AUTH
def auth(server, share, wg, wglen, user, userlen, pw, pwlen):
    fill(user, userlen, a['user']); fill(pw, pwlen, a['password'])
lib.smbc_setFunctionAuthData.argtypes = [P, AUTH]
ctx = lib.smbc_new_context()
lib.smbc_setOptionDebugToStderr(ctx, 1)  # the library's messages (a missing smb.conf) never mix into stdout
${options.beforeInit ?? ''}
lib.smbc_setPort(ctx, a['port'])
lib.smbc_setTimeout(ctx, a['timeout_ms'])
lib.smbc_setFunctionAuthData(ctx, auth)
ctx = lib.smbc_init_context(ctx)
if not ctx:
    print('init', errno.errorcode.get(ctypes.get_errno(), '?'), file=sys.stderr); sys.exit(${options.initFailedExit})
lib.smbc_set_context(ctx)
q = lambda s: urllib.parse.quote(s, safe='')
url = 'smb://%s/%s/%s' % (a['host'], q(a['share']), '/'.join(q(p) for p in a['path']))
`;
}
