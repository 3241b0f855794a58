import fs from 'node:fs';
import path from 'node:path';
import { DOCKERFILES, pinnedImage, unpinnedBases, withDigest } from '../../../tools/images/pins';
import { hardLimit, podmanGlobalArgs, ulimitArgs } from '../../../tools/images/podman';

/** Issue 51, "The images name base tags, not digests" (decision 452): every FROM of the project names a digest. */
const ROOT = path.resolve(__dirname, '../../..');
const D = `sha256:${'a'.repeat(64)}`;

describe('base images named by digest', () => {
  it.each(DOCKERFILES)('%s: every FROM names a digest', (file) => {
    expect(unpinnedBases(fs.readFileSync(path.join(ROOT, file), 'utf8'))).toEqual([]);
  });

  it('lists every Dockerfile of the repository', () => {
    const found: string[] = [];
    const walk = (dir: string) => {
      for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
        if (['node_modules', '.git', '.images', '.serverless', '.stack', '.esbuild'].includes(e.name)) continue;
        const rel = path.join(dir, e.name);
        if (e.isDirectory()) walk(rel);
        else if (/^(Dockerfile|Containerfile)$/.test(e.name)) found.push(rel);
      }
    };
    walk('.');
    expect(found.sort()).toEqual([...DOCKERFILES].sort());
  });

  it('refuses a tag, a tag through an ARG, an ARG without a default, and a short or upper-case digest', () => {
    expect(unpinnedBases('FROM node:24-bookworm-slim\n')).toEqual([
      'FROM node:24-bookworm-slim: node:24-bookworm-slim names no digest (@sha256:<64 hex>)',
    ]);
    expect(unpinnedBases('ARG BASE=amazon/aws-lambda-nodejs:24\nFROM ${BASE} AS b\nFROM b\n')).toHaveLength(1);
    expect(unpinnedBases('ARG BASE\nFROM $BASE\n')).toEqual(['FROM $BASE: ARG BASE has no default naming a digest']);
    expect(unpinnedBases(`FROM node@sha256:${'a'.repeat(63)}\n`)).toHaveLength(1);
    expect(unpinnedBases(`FROM node@sha256:${'A'.repeat(64)}\n`)).toHaveLength(1);
    // A stage named like an image is only a stage once defined: before, it is an image.
    expect(unpinnedBases(`FROM build\nFROM node@${D} AS build\n`)).toHaveLength(1);
  });

  it('accepts a digest with or without a tag, through an ARG, --platform, and earlier stages', () => {
    const text = `# comment\nARG BASE=amazon/aws-lambda-nodejs:24@${D}\nFROM --platform=linux/arm64 \${BASE} AS bundles\nRUN true\nFROM bundles AS again\nFROM node@${D}\n`;
    expect(unpinnedBases(text)).toEqual([]);
  });

  it('re-pins an ARG default, keeping its image and tag, and refuses what is not a digest', () => {
    const text = `ARG BASE=node:24-bookworm-slim@sha256:${'b'.repeat(64)}\nFROM \${BASE}\n`;
    expect(withDigest(text, 'BASE', D)).toBe(`ARG BASE=node:24-bookworm-slim@${D}\nFROM \${BASE}\n`);
    expect(withDigest('ARG BASE=node:24\n', 'BASE', D)).toBe(`ARG BASE=node:24@${D}\n`);
    expect(pinnedImage(text, 'BASE')).toBe('node:24-bookworm-slim');
    expect(() => withDigest(text, 'BASE', 'sha256:1234')).toThrow(/not a digest/);
    expect(() => withDigest('FROM x\n', 'BASE', D)).toThrow(/no "ARG BASE=/);
  });
});

describe("podman's flags on this project's machines (decision 449)", () => {
  const limits = [
    'Limit                     Soft Limit           Hard Limit           Units',
    'Max processes             96367                96367                processes',
    'Max open files            20000                20000                files',
  ].join('\n');

  it('caps open files at the hard limit and processes at 4096', () => {
    expect(hardLimit('Max open files', limits)).toBe(20000);
    expect(ulimitArgs(limits)).toEqual(['--ulimit', 'nofile=20000:20000', '--ulimit', 'nproc=4096:4096']);
    const unlimited = limits.replace(/20000 {16}20000/, 'unlimited            unlimited');
    expect(ulimitArgs(unlimited)).toEqual(['--ulimit', 'nofile=1048576:1048576', '--ulimit', 'nproc=4096:4096']);
  });

  it('names the runtime IMAGES_OCI_RUNTIME says', () => {
    expect(podmanGlobalArgs({ IMAGES_OCI_RUNTIME: 'crun' })).toEqual(['--runtime', 'crun']);
  });
});
