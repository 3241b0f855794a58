import { spawnSync } from 'node:child_process';
import { missingMotoTools, motoPython, PIP_INSTALL } from '../deploy/moto';
import { ensureDebianPackage } from './debian';
import { cliSpec, runCli } from '../cli/run';

/**
 * The Debian packages the local stack runs, in one list. `npm run setup`
 * installs them all up front (CI does); the stack also ensures each one it
 * starts, so `npm start` on a fresh machine needs no manual step either.
 */
export const SYSTEM_DEPS = {
  java: { binary: 'java', pkg: 'openjdk-17-jre-headless' },
  nats: { binary: 'nats-server', pkg: 'nats-server' },
  // The SMB hot folder: Samba's client talks to the share; the server serves the tests' share.
  smbclient: { binary: 'smbclient', pkg: 'smbclient' },
  smbd: { binary: 'smbd', pkg: 'samba' },
  // The web UI's browser tests drive Debian's Chromium (puppeteer-core never downloads one).
  chromium: { binary: 'chromium', pkg: 'chromium' },
  // The stack's torrent client, the seeder of `npm run torrent:seed` and the real-client tests' swarm.
  qbittorrent: { binary: 'qbittorrent-nox', pkg: 'qbittorrent-nox' },
  // Makes v1, v2 and hybrid torrents (libtorrent's own create_torrent; mktorrent makes v1 only).
  // Debian's python3: a python3 earlier on the PATH (pyenv) does not see Debian's modules.
  libtorrent: { binary: '/usr/bin/python3', pkg: 'python3-libtorrent', module: 'libtorrent' },
  // npm run images:build / test:images (docs/deploy.md, "Building and running the images here"): podman builds and
  // runs the images on runc (crun refuses this kind of host's cgroups; decision 449), mmdebstrap makes their bases
  // from Debian's packages, buildah is podman's builder, skopeo asks a registry for a tag's digest (images:pin).
  podman: { binary: 'podman', pkg: 'podman' },
  runc: { binary: 'runc', pkg: 'runc' },
  buildah: { binary: 'buildah', pkg: 'buildah' },
  mmdebstrap: { binary: 'mmdebstrap', pkg: 'mmdebstrap' },
  skopeo: { binary: 'skopeo', pkg: 'skopeo' },
} as const;

export function ensureSystemDep(name: keyof typeof SYSTEM_DEPS, say: (line: string) => void): string {
  const dep: { binary: string; pkg: string; module?: string } = SYSTEM_DEPS[name];
  const module = dep.module;
  return ensureDebianPackage(
    dep.binary,
    dep.pkg,
    say,
    module ? (python) => spawnSync(python, ['-c', `import ${module}`], { stdio: 'ignore' }).status === 0 : undefined,
  );
}

export const SETUP_CLI = cliSpec({
  usage: `usage: npm run setup

Installs the Debian packages the local stack runs when they are missing (as root,
after apt-get update): ${Object.values(SYSTEM_DEPS)
    .map((d) => d.pkg)
    .join(', ')}; and says whether the deploy
test's Python tools (moto's server, cfn-lint) are importable.

  --help  this text

Exit 0 all there, 1 a package could not be installed, 2 bad usage.`,
  options: {},
});

async function setup(): Promise<number> {
  for (const name of Object.keys(SYSTEM_DEPS) as Array<keyof typeof SYSTEM_DEPS>) {
    const path = ensureSystemDep(name, (line) => process.stdout.write(`[setup] ${line}\n`));
    process.stdout.write(`[setup] ${SYSTEM_DEPS[name].binary}: ${path}\n`);
  }
  // The deploy test's (test/aws/): Python packages, not Debian ones. The machine images ship them; PyPI is not
  // reachable from them, so setup installs nothing here and the deploy test skips, naming what is missing.
  const missing = missingMotoTools();
  process.stdout.write(
    missing.length
      ? `[setup] ${missing.join(', ')} missing for ${motoPython()}: the deploy test (npm run test:aws) skips; install with ${PIP_INSTALL}\n`
      : `[setup] moto's server and cfn-lint: importable by ${motoPython()}\n`,
  );
  return 0;
}

if (require.main === module) runCli(SETUP_CLI, setup, { crash: { code: 1, stack: false } });
