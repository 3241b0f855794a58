import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { cliSpec, runCli, UsageError } from '../cli/run';
import { connectorBase, lambdaBase, type Base, type Step } from './bases';
import { inspectImage, podman, ulimitArgs } from './podman';

/**
 * `npm run images:build`: the scan functions' Lambda image (images/scan/Dockerfile) and the NATS connector's
 * (connector/Dockerfile), built here with podman from the very Dockerfiles an operator builds with Docker, on bases
 * made from Debian's packages (tools/images/bases.ts) because this machine reaches no container registry
 * (docs/deploy.md, "Building and running the images here"; decisions 448-453). Steps: `serverless package` as the
 * runbook's first deploy does (the scan functions as zips, the connector's functions and events), each base (reused
 * when made from the same inputs before), each image. What it built goes to .images/images.json, which
 * `npm run test:images` runs.
 */

const ROOT = path.resolve(__dirname, '../..');
export const IMAGES_DIR = path.join(ROOT, '.images');
export const MANIFEST = path.join(IMAGES_DIR, 'images.json');
/** The stage the images are packaged for, as the runbook's (it needs a stage's settings: placeholders here). */
export const IMAGE_STAGE = 'prod';
export const SCAN_TAG = `localhost/tss-scan:${IMAGE_STAGE}`;
export const CONNECTOR_TAG = `localhost/nats-connector:${IMAGE_STAGE}`;

export interface BuiltImage {
  tag: string;
  id: string;
  bytes: number;
  base: { tag: string; id: string; made: boolean };
  ms: number;
}

export interface ImagesManifest {
  stage: string;
  architecture: string;
  packageMs: number;
  scan?: BuiltImage;
  connector?: BuiltImage;
  totalMs: number;
}

export const IMAGES_CLI = cliSpec({
  usage: `usage: npm run images:build [-- --only scan|connector] [--skip-package]

Builds the scan functions' Lambda image (${SCAN_TAG}) and the NATS connector's
(${CONNECTOR_TAG}) with podman, from images/scan/Dockerfile and connector/Dockerfile,
on bases made from Debian packages with mmdebstrap (docs/deploy.md, "Building and
running the images here"). Needs root, podman, runc and mmdebstrap (npm run setup).
Writes .images/images.json; npm run test:images runs what it built.

  --only <image>    scan or connector (default: both)
  --skip-package    reuse .serverless/ from an earlier run instead of packaging again
  --help            this text

Exit 0 built, 1 a step failed, 2 bad usage.`,
  options: {
    only: { type: 'string' },
    'skip-package': { type: 'boolean' },
  },
});

/** Progress: one line per step as it starts, some of its own lines, and its duration when it ends. */
export function stepReporter(write: (text: string) => void, clock: () => number = Date.now): Step {
  return (title: string) => {
    const began = clock();
    let shown = 0;
    write(`[images] ${title} …\n`);
    return {
      line(text: string) {
        // A build prints hundreds of lines: its own steps all, the rest at most one a second.
        const now = clock();
        const landmark = /^(\[\d+\/\d+\] )?STEP \d+\/\d+|^I: |^COMMIT/.test(text.trim());
        if (!text.trim() || (!landmark && now - shown < 1000)) return;
        shown = now;
        write(`[images]   ${text.trim().slice(0, 160)}\n`);
      },
      done(note?: string) {
        write(`[images] ${title}: done in ${((clock() - began) / 1000).toFixed(1)} s${note ? ` (${note})` : ''}\n`);
      },
    };
  };
}

/** `serverless package --stage prod` into .serverless/, as docs/deploy.md's runbook, with a stage's placeholder settings. */
async function packageService(): Promise<number> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    SLS_TELEMETRY_DISABLED: '1',
    SLS_NOTIFICATIONS_MODE: 'off',
    ESBUILD_WORK_DIR: path.relative(ROOT, path.join(IMAGES_DIR, 'esbuild')),
    // A stage's endpoints (the template gets them, the bundles never); a kept stage needs someone its alarms reach.
    NATS_URL: 'tls://nats.example.internal:4222',
    TORRENT_CLIENT_URL: 'https://qbt.example.internal',
    TBANK_API_URL: 'https://invest-public-api.tbank.ru',
    PUBLIC_UI_URL: 'https://tss.example.com',
    FILES_BUCKET: 'tss-images-files',
    SCAN_SMB_SHARE: '//smb.example.internal/scan',
    ALARM_EMAILS: 'oncall@example.com',
  };
  // The deployed target, the scan functions as zips (the image copies them), no local hot folder (refused on AWS).
  for (const name of [
    'DEPLOY_TARGET',
    'SCAN_FUNCTIONS_IMAGE',
    'SCAN_HOTFOLDER_ROOT',
    'SCAN_HOTFOLDER_MODE',
    'SCAN_HOTFOLDER_PATH',
  ])
    delete env[name];
  const began = Date.now();
  const cli = path.join(ROOT, 'node_modules/osls/bin/serverless.js');
  await promisify(execFile)(process.execPath, [cli, 'package', '--stage', IMAGE_STAGE, '--package', '.serverless'], {
    cwd: ROOT,
    env,
    maxBuffer: 32 * 1024 * 1024,
  }).catch((err: Error & { stdout?: string; stderr?: string }) => {
    throw new Error(`serverless package failed: ${err.message}\n${err.stdout ?? ''}\n${err.stderr ?? ''}`);
  });
  return Date.now() - began;
}

/** `podman build` of one Dockerfile from the repository root, its own ignore file, its BASE the local base's id. */
async function buildImage(o: {
  dockerfile: string;
  tag: string;
  base: Base;
  step: Step;
  title: string;
  extra?: string[];
}): Promise<BuiltImage> {
  const s = o.step(o.title);
  const began = Date.now();
  await podman(
    [
      'build',
      '--pull=never',
      ...ulimitArgs(),
      '-f',
      o.dockerfile,
      '--ignorefile',
      `${o.dockerfile}.dockerignore`,
      '--build-arg',
      `BASE=${o.base.id}`,
      '-t',
      o.tag,
      ...(o.extra ?? []),
      '.',
    ],
    { onLine: s.line },
  );
  const { id, size } = await inspectImage(o.tag);
  const ms = Date.now() - began;
  s.done(`${(size / 1e6).toFixed(0)} MB, id ${id.replace(/^sha256:/, '').slice(0, 12)}`);
  return { tag: o.tag, id, bytes: size, base: o.base, ms };
}

/**
 * What the connector's build stage needs for its `npm ci` besides the host's network (decision 453): this machine's
 * npm cache, its CA bundle (its way to the registry may present a certificate of its own, which npm trusts through
 * the global npmrc's `cafile`) and that global npmrc, mounted for the build only: none of them ends up in a layer.
 */
function npmAccess(): string[] {
  const mounts = [`${path.join(os.homedir(), '.npm')}:/root/.npm`];
  const ca = '/etc/ssl/certs/ca-certificates.crt';
  if (fs.existsSync(ca)) mounts.push(`${ca}:${ca}:ro`);
  // npm's global config is <prefix>/etc/npmrc; the connector's base has npm under /usr/local, as Node.js's image.
  for (const global of ['/etc/npmrc', '/usr/etc/npmrc'])
    if (fs.existsSync(global)) {
      mounts.push(`${global}:/usr/local/etc/npmrc:ro`);
      break;
    }
  return mounts.flatMap((m) => ['-v', m]);
}

export async function buildImages(
  o: { only?: 'scan' | 'connector'; skipPackage?: boolean },
  write: (text: string) => void = (t) => process.stdout.write(t),
): Promise<ImagesManifest> {
  if (process.getuid?.() !== 0) throw new Error('building the images needs root (rootful podman, mmdebstrap)');
  const began = Date.now();
  const step = stepReporter(write);
  fs.mkdirSync(IMAGES_DIR, { recursive: true });
  let packageMs = 0;
  if (!o.skipPackage) {
    const s = step(`serverless package --stage ${IMAGE_STAGE} (the scan functions as zips)`);
    packageMs = await packageService();
    s.done();
  }
  const manifest: ImagesManifest = {
    stage: IMAGE_STAGE,
    architecture: os.arch() === 'x64' ? 'amd64' : os.arch(),
    packageMs,
    totalMs: 0,
  };
  if (o.only !== 'connector') {
    const base = await lambdaBase(IMAGES_DIR, step);
    write(`[images] Lambda base: ${base.tag} (${base.made ? 'made now' : 'reused'}), ${base.id}\n`);
    manifest.scan = await buildImage({
      dockerfile: 'images/scan/Dockerfile',
      tag: SCAN_TAG,
      base,
      step,
      title: `scan image ${SCAN_TAG} (images/scan/Dockerfile, BASE=${base.id.slice(0, 19)}…)`,
      extra: ['--network=none'],
    });
  }
  if (o.only !== 'scan') {
    const base = await connectorBase(IMAGES_DIR, step);
    write(`[images] connector base: ${base.tag} (${base.made ? 'made now' : 'reused'}), ${base.id}\n`);
    manifest.connector = await buildImage({
      dockerfile: 'connector/Dockerfile',
      tag: CONNECTOR_TAG,
      base,
      step,
      title: `connector image ${CONNECTOR_TAG} (connector/Dockerfile, BASE=${base.id.slice(0, 19)}…)`,
      extra: ['--network=host', ...npmAccess()],
    });
  }
  manifest.totalMs = Date.now() - began;
  const previous = fs.existsSync(MANIFEST) ? (JSON.parse(fs.readFileSync(MANIFEST, 'utf8')) as ImagesManifest) : {};
  fs.writeFileSync(MANIFEST, `${JSON.stringify({ ...previous, ...manifest }, null, 2)}\n`);
  write(`[images] all done in ${(manifest.totalMs / 1000).toFixed(1)} s; ${path.relative(ROOT, MANIFEST)}\n`);
  return manifest;
}

async function main(args: { values: { only?: string; 'skip-package'?: boolean } }): Promise<number> {
  const only = args.values.only;
  if (only !== undefined && only !== 'scan' && only !== 'connector')
    throw new UsageError(`--only takes scan or connector, not ${JSON.stringify(only)}`);
  await buildImages({ only, skipPackage: args.values['skip-package'] });
  return 0;
}

if (require.main === module) runCli(IMAGES_CLI, main, { crash: { code: 1, stack: false } });
