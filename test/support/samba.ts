import fs from 'node:fs';
import path from 'node:path';
import type { RunningService } from '../../tools/stack/process';
import { startSmbd } from '../../tools/stack/samba';

/**
 * A real Samba share on 127.0.0.1 for the tests: its own config, state and
 * password database under `dir`, a free port, SMB2+ only. Needs root (as CI is).
 */
export interface Share {
  host: string;
  port: number;
  share: string;
  user: string;
  password: string;
  /** The share's folder on this machine (where the scanning system would look). */
  root: string;
  /** A share without a login (guest; files written as \`nobody\`): its name and folder. */
  guest: { share: string; root: string };
  /**
   * A share with restricted rights, as production shares often are: its user may not create folders in the
   * share's root (files written as \`daemon\`, the root belongs to root), only work inside Input/ and Tmp/, which exist.
   */
  restricted: { share: string; root: string };
  /**
   * The hot folder's own folder, shared a second time with raw names (\`mangled names = no\`): a name the share
   * cannot address (\`"\`) shows as it is, as some non-Windows servers send it, instead of an 8.3 alias.
   */
  rawNames: { share: string };
  /**
   * The hot folder's own folder, shared a third time as docs/scan.md asks of a production share: `follow
   * symlinks = no` (Samba's default follows a link whose target stays inside the share, and no SMB2 client can
   * tell such a file from any other; `wide links = no`, the default, already hides a target outside the share).
   */
  noLinks: { share: string };
  service: RunningService;
}

/** Debian's \`daemon\` account (uid 1): the restricted share's file owner. */
const DAEMON_UID = 1;

/** `fixedPort`: Samba's Python client bindings (test/support/smb-hold.py) only reach port 445. */
export async function startSamba(dir: string, fixedPort?: number): Promise<Share> {
  for (const sub of ['share/Input', 'guest', 'restricted/Input', 'restricted/Tmp'])
    fs.mkdirSync(path.join(dir, sub), { recursive: true });
  // The guest and restricted shares act as other accounts, which must reach their folders (mkdtemp makes 0700).
  fs.chmodSync(dir, 0o755);
  fs.chmodSync(path.join(dir, 'guest'), 0o777);
  fs.chmodSync(path.join(dir, 'restricted'), 0o755);
  for (const sub of ['Input', 'Tmp']) fs.chownSync(path.join(dir, 'restricted', sub), DAEMON_UID, DAEMON_UID);
  const { port, password, service } = await startSmbd({
    dir,
    port: fixedPort,
    shares: `[hotfolder]
  path = ${dir}/share
  read only = no
  valid users = root
[rawnames]
  path = ${dir}/share
  read only = no
  valid users = root
  mangled names = no
[nolinks]
  path = ${dir}/share
  read only = no
  valid users = root
  follow symlinks = no
[guest]
  path = ${dir}/guest
  read only = no
  guest ok = yes
  guest only = yes
[restricted]
  path = ${dir}/restricted
  read only = no
  valid users = root
  force user = daemon
`,
  });
  return {
    host: '127.0.0.1',
    port,
    share: 'hotfolder',
    user: 'root',
    password,
    root: path.join(dir, 'share'),
    guest: { share: 'guest', root: path.join(dir, 'guest') },
    restricted: { share: 'restricted', root: path.join(dir, 'restricted') },
    rawNames: { share: 'rawnames' },
    noLinks: { share: 'nolinks' },
    service,
  };
}
