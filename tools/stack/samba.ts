import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { freePort, tcpOpen } from './ports';
import { RunningService, startProcess } from './process';
import { ensureSystemDep } from './system-deps';

/**
 * A real Samba server on 127.0.0.1 with its own config, state and password
 * database under `dir`, SMB2+ only, one login (`root`, a password made per
 * run): the SMB hot folder of `STACK_HOTFOLDER=smb` and the soak, and the
 * tests' shares. Needs root (smbd's account checks; the tests' shares act as
 * other accounts).
 */

export interface Smbd {
  port: number;
  user: string;
  password: string;
  service: RunningService;
  /** Starts smbd again on the same port, settings and login, after `service` ended (tests: a restarted server). */
  relaunch: () => Promise<RunningService>;
}

export interface SmbdOptions {
  dir: string;
  /** `[name]` sections with their settings: what this server shares. */
  shares: string;
  /** A fixed port (Samba's Python client bindings reach only 445); a free one by default. */
  port?: number;
  /** More `[global]` settings (a test's `change notify = no`: Samba reads it only there). */
  globals?: string;
  /** smbd's own output (default `dir`/smbd.out). */
  logFile?: string;
  say?: (line: string) => void;
}

export async function startSmbd(o: SmbdOptions): Promise<Smbd> {
  const say = o.say ?? (() => undefined);
  if (process.getuid?.() !== 0)
    throw new Error(
      'an SMB share of our own needs root (smbd checks accounts as root): run as root, or use a local hot folder',
    );
  const smbd = ensureSystemDep('smbd', say);
  ensureSystemDep('smbclient', say);
  const smbpasswd = path.join(path.dirname(smbd).replace('/sbin', '/bin'), 'smbpasswd');
  for (const sub of ['state', 'private', 'lock', 'cache', 'pid'])
    fs.mkdirSync(path.join(o.dir, sub), { recursive: true });
  const port = o.port ?? (await freePort());
  const conf = path.join(o.dir, 'smb.conf');
  fs.writeFileSync(
    conf,
    `[global]
  workgroup = WORKGROUP
  server role = standalone server
  smb ports = ${port}
  interfaces = 127.0.0.1
  bind interfaces only = yes
  pid directory = ${o.dir}/pid
  lock directory = ${o.dir}/lock
  state directory = ${o.dir}/state
  cache directory = ${o.dir}/cache
  private dir = ${o.dir}/private
  log file = ${o.dir}/log.%m
  passdb backend = tdbsam:${o.dir}/private/passdb.tdb
  map to guest = bad user
  guest account = nobody
  load printers = no
  printcap name = /dev/null
  disable spoolss = yes
  disable netbios = yes
  server min protocol = SMB2
${o.globals ?? ''}
${o.shares}`,
  );
  const password = randomBytes(9).toString('base64url');
  execFileSync(fs.existsSync(smbpasswd) ? smbpasswd : 'smbpasswd', ['-c', conf, '-s', '-a', 'root'], {
    input: `${password}\n${password}\n`,
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const launch = () =>
    startProcess({
      name: 'smbd',
      command: smbd,
      // One process group with its per-client children: a stop or kill of the service reaches them all.
      args: ['--foreground', '--no-process-group', `--configfile=${conf}`, '--debug-stdout'],
      logFile: o.logFile ?? path.join(o.dir, 'smbd.out'),
      url: `smb://127.0.0.1:${port}`,
      ready: () => tcpOpen(port),
      port,
    });
  return { port, user: 'root', password, service: await launch(), relaunch: launch };
}

/**
 * `STACK_HOTFOLDER=smb`: the hot folder at `root` served as `//127.0.0.1/hotfolder`, and the settings that
 * point the scan functions at the share instead of the folder (docs/scan.md). The scanner emulator still
 * watches `root` itself, as a scanning system watches the folder it shares.
 */
export async function startHotFolderShare(o: {
  stateDir: string;
  root: string;
  logDir: string;
  say: (line: string) => void;
}): Promise<{ service: RunningService; env: Record<string, string> }> {
  const smbd = await startSmbd({
    dir: path.join(o.stateDir, 'samba'),
    // As a production share should be (docs/security.md, "The hot folder"): no link in it is followed.
    shares: `[hotfolder]\n  path = ${o.root}\n  read only = no\n  valid users = root\n  follow symlinks = no\n`,
    logFile: path.join(o.logDir, 'smbd.log'),
    say: o.say,
  });
  return {
    service: smbd.service,
    env: {
      SCAN_HOTFOLDER_MODE: 'smb',
      SCAN_HOTFOLDER_PATH: '//127.0.0.1/hotfolder',
      SCAN_SMB_PORT: String(smbd.port),
      SCAN_SMB_USER: smbd.user,
      SCAN_SMB_PASSWORD: smbd.password,
    },
  };
}
