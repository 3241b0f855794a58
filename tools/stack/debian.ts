import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

/**
 * Finds a binary that comes from a Debian package and installs the package
 * when it is missing (the project's promise: nothing installed by hand).
 * Debian puts daemons in /usr/sbin, which a non-root PATH may lack.
 */

const EXTRA_DIRS = ['/usr/sbin', '/usr/local/sbin', '/sbin'];

export function findBinary(name: string): string | undefined {
  const dirs = path.isAbsolute(name) ? [''] : [...(process.env.PATH ?? '').split(path.delimiter), ...EXTRA_DIRS];
  for (const dir of dirs) {
    const candidate = dir ? path.join(dir, name) : name;
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return candidate;
    } catch {
      // next
    }
  }
  return undefined;
}

export function ensureDebianPackage(
  binary: string,
  pkg: string,
  say: (line: string) => void,
  /** A package that brings no binary of its own (a Python module): whether it is there. */
  present: (found: string) => boolean = () => true,
): string {
  const found = findBinary(binary);
  if (found && present(found)) return found;
  const what = found ? `${pkg} (for ${binary})` : binary;
  if (process.getuid?.() !== 0) {
    throw new Error(`${what} is missing: install the Debian package '${pkg}' (sudo apt-get install -y ${pkg})`);
  }
  say(`${what} is missing: installing the Debian package '${pkg}' (apt-get update, then apt-get install -y ${pkg})`);
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit' });
  const result = spawnSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', pkg], {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const installed = findBinary(binary);
  if (result.status !== 0 || !installed || !present(installed))
    throw new Error(`installing the Debian package '${pkg}' failed`);
  return installed;
}
