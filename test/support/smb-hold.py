"""Holds a file open on an SMB share the way a busy scanning system would, until stdin closes.

usage: smb-hold.py HOST PORT SHARE USER PASSWORD PATH exclusive|delete-pending|writing SMB_CONF [LOCAL_FILE]
  exclusive       open with no sharing: every other open gets NT_STATUS_SHARING_VIOLATION
  delete-pending  open, then mark delete-on-close: other opens get NT_STATUS_DELETE_PENDING
  writing         create the file for writing, sharing read and write (a writer that lets readers in, as most
                  do), write the first half of LOCAL_FILE; when stdin closes, the rest, then close
Uses Samba's own Python bindings (python3-samba, a dependency of the samba package).
"""
import sys
from samba import credentials, param
from samba.samba3 import libsmb_samba_internal as libsmb
from samba.samba3 import param as s3param

host, port, share, user, password, path, mode, conf = sys.argv[1:9]
# The client half of Samba reads its settings from the s3 global config: give it the test server's.
s3param.get_context().load(conf)
lp = param.LoadParm()
lp.load(conf)
lp.set('client min protocol', 'SMB2')
lp.set('smb ports', port)  # honoured by these bindings only for 445: the share under test runs there
creds = credentials.Credentials()
creds.guess(lp)
creds.set_username(user)
creds.set_password(password)
conn = libsmb.Conn(host, share, lp, creds)
FILE_READ_DATA, DELETE = 0x1, 0x10000
FILE_WRITE_DATA, FILE_SHARE_READ_WRITE, FILE_OVERWRITE_IF = 0x2, 0x3, 5
if mode == 'writing':
    body = open(sys.argv[9], 'rb').read()
    half = len(body) // 2
    fnum = conn.create(path, DesiredAccess=FILE_READ_DATA | FILE_WRITE_DATA, ShareAccess=FILE_SHARE_READ_WRITE,
                       CreateDisposition=FILE_OVERWRITE_IF)
    conn.write(fnum, body[:half], 0)
    print('held', flush=True)
    sys.stdin.read()
    conn.write(fnum, body[half:], half)
    conn.close(fnum)
    sys.exit(0)
if mode == 'exclusive':
    fnum = conn.create(path, DesiredAccess=FILE_READ_DATA, ShareAccess=0)
else:
    fnum = conn.create(path, DesiredAccess=FILE_READ_DATA | DELETE, ShareAccess=7)
    conn.delete_on_close(fnum, 1)
print('held', flush=True)
sys.stdin.read()
conn.close(fnum)
