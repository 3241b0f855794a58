import type http from 'node:http';

/** What the HTTP emulators share: reading a body, and running as a process until signalled. */

export function readBody(req: http.IncomingMessage): Promise<string> {
  return readBodyBytes(req).then((bytes) => bytes.toString('utf8'));
}

/** The body as bytes: a multipart upload (a .torrent) is binary and must not pass through UTF-8. */
export function readBodyBytes(req: http.IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export interface Listening {
  listen(port: number): Promise<string>;
  close(): Promise<void>;
}

/** Listens on PORT (or `defaultPort`), says where, and closes cleanly on SIGTERM/SIGINT. */
export function serveUntilSignalled(name: string, server: Listening, defaultPort: number): void {
  server
    .listen(Number(process.env.PORT ?? defaultPort))
    .then((url) => {
      process.stdout.write(`${name} listening on ${url}\n`);
      const stop = () => void server.close().then(() => process.exit(0));
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    })
    .catch((err) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    });
}
