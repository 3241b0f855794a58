import type http from 'node:http';

/** A JSON answer; a connection a fault already dropped gets nothing. */
export function send(res: http.ServerResponse, status: number, body: unknown): void {
  if (res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
