/**
 * The scan functions' Lambda container image (images/scan/Dockerfile; docs/deploy.md, "The SMB hot folder on
 * AWS"; docs/decisions.md 260-263): which functions run from it, and what its Dockerfile copies and starts, read
 * back from the file itself, so that the test running the same bundles (test/integration/scan/smb-image.test.ts)
 * and the template's wiring cannot drift from it.
 */

/**
 * The functions that reach the hot folder, so need Samba's `smbclient`, which the zip runtime `nodejs24.x` lacks:
 * the request and the poller, and the healthcheck, which probes the share. They run from the image when the deploy
 * setting SCAN_IMAGE_SETTING names it.
 */
export const SCAN_IMAGE_FUNCTIONS = ['scanRequest', 'scanPoll', 'healthcheck'] as const;

/** The deploy setting naming the pushed image: an ECR image URI with a tag or a digest. */
export const SCAN_IMAGE_SETTING = 'SCAN_FUNCTIONS_IMAGE';

/** The Dockerfile, from the repository root (its build context). */
export const SCAN_DOCKERFILE = 'images/scan/Dockerfile';

/**
 * Text that only the SMB session's code puts in a bundle (the way lib/scan/smb-session.ts starts smbclient):
 * a packaged function whose bundle holds it may start smbclient, so it must run from the image.
 */
export const SMB_CLIENT_MARK = 'stdbuf -i0 -oL -eL';

/**
 * What the image installs for the hot folder (decision 315): Samba's client for the session, its library and the
 * system's Python that read an answer under an exclusive open (lib/scan/smb-read.ts).
 */
export const SMB_IMAGE_PACKAGES = ['samba-client', 'libsmbclient', 'python3'] as const;

export interface ImageDockerfile {
  /** Packages its final stage installs with `dnf install`, in the order written. */
  packages: string[];
  /** The packaged zips it copies, by function key (`.serverless/<key>.zip`), in the order written. */
  zips: string[];
  /** Its last CMD (exec form): the handler Lambda starts when a function names no command. */
  cmd: string[];
}

const ZIP = /^\.serverless\/([A-Za-z0-9_-]+)\.zip$/;

/** The Dockerfile's instructions, continuation lines joined, comments and blank lines dropped. */
export function dockerInstructions(text: string): Array<{ keyword: string; args: string }> {
  const lines = text.split('\n').filter((line) => !/^\s*(#|$)/.test(line));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  return joined
    .split('\n')
    .map((line) => /^\s*([A-Za-z]+)\s+(.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ keyword: m[1].toUpperCase(), args: m[2].trim() }));
}

export function readImageDockerfile(text: string): ImageDockerfile {
  const instructions = dockerInstructions(text);
  const zips: string[] = [];
  for (const { keyword, args } of instructions) {
    if (keyword !== 'COPY' && keyword !== 'ADD') continue;
    const words = args.split(/\s+/).filter((w) => !w.startsWith('--'));
    for (const source of words.slice(0, -1)) {
      const m = ZIP.exec(source);
      if (m) zips.push(m[1]);
      else if (source.startsWith('.serverless')) throw new Error(`${SCAN_DOCKERFILE} copies ${source}: not a zip`);
    }
  }
  const final = instructions.slice(instructions.map((i) => i.keyword).lastIndexOf('FROM'));
  const packages = final
    .filter((i) => i.keyword === 'RUN')
    .flatMap((i) => [...i.args.matchAll(/\bdnf install((?:\s+[^\s&|;]+)+)/g)])
    .flatMap((m) => m[1].trim().split(/\s+/))
    .filter((word) => !word.startsWith('-'));
  const cmds = instructions.filter((i) => i.keyword === 'CMD');
  if (cmds.length === 0) throw new Error(`${SCAN_DOCKERFILE} has no CMD`);
  const cmd: unknown = JSON.parse(cmds[cmds.length - 1].args);
  if (!Array.isArray(cmd) || !cmd.every((c) => typeof c === 'string'))
    throw new Error(`${SCAN_DOCKERFILE}: CMD must be the exec form, a JSON list of strings`);
  return { packages, zips, cmd };
}
