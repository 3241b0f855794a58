import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { cliSpec, runCli } from '../cli/run';
import { DOCKERFILES, pinnedImage, withDigest } from './pins';

/**
 * `npm run images:pin`: re-pins each Dockerfile's `ARG BASE` to the digest its tag names today (decision 452). It
 * asks the registry through skopeo for the tag's manifest as served (for a multi-platform image: the index, so that
 * `--platform linux/arm64` still picks the arm64 image) and writes `sha256:` of exactly those bytes
 * (`skopeo manifest-digest`). Run it on a machine that reaches the registry, then rebuild and test before committing
 * the new digest; this project's own machines reach none, so here it fails at the first image, naming it.
 */

export const PIN_CLI = cliSpec({
  usage: `usage: npm run images:pin [-- --dry-run]

Asks the registry (skopeo) for the digest each Dockerfile's ARG BASE tag names
today and writes it there: ${DOCKERFILES.join(', ')}.

  --dry-run   print the new digests, change nothing
  --help      this text

Exit 0 pinned, 1 the registry could not be asked, 2 bad usage.`,
  options: { 'dry-run': { type: 'boolean' } },
});

const run = promisify(execFile);

export async function currentDigest(image: string): Promise<string> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tss-pin-'));
  try {
    const manifest = path.join(dir, 'manifest.json');
    const { stdout } = await run('skopeo', ['inspect', '--raw', `docker://${image}`], { maxBuffer: 8 * 1024 * 1024 });
    fs.writeFileSync(manifest, stdout);
    return (await run('skopeo', ['manifest-digest', manifest])).stdout.trim();
  } catch (err) {
    throw new Error(`asking the registry for ${image} failed: ${(err as Error).message.split('\n')[0]}`, {
      cause: err,
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function main(args: { values: { 'dry-run'?: boolean } }): Promise<number> {
  const root = path.resolve(__dirname, '../..');
  for (const file of DOCKERFILES) {
    const text = fs.readFileSync(path.join(root, file), 'utf8');
    const image = pinnedImage(text, 'BASE');
    const digest = await currentDigest(image);
    process.stdout.write(`${file}: ${image}@${digest}\n`);
    if (!args.values['dry-run']) fs.writeFileSync(path.join(root, file), withDigest(text, 'BASE', digest));
  }
  return 0;
}

if (require.main === module) runCli(PIN_CLI, main, { crash: { code: 1, stack: false } });
