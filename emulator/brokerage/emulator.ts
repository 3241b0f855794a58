import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readBody } from '../http';
import dataset from '../../fixtures/brokerage/dataset.json';

/**
 * A brokerage API emulator (HTTP, bearer tokens): accounts, portfolio,
 * operations paged by cursor, corporate events, instrument catalog.
 * A token is valid when it looks like `tok_` + 8 or more letters/digits.
 *
 * Per-section fault knobs, set by tests and by hand:
 *   PUT /emulator/faults {"operations": {"latencyMs": 200, "status": 503, "hang": true, "rejectToken": true}}
 *   DELETE /emulator/faults
 * Sections: portfolio (accounts + portfolio), operations, events.refresh (events), catalog.enrichment (instruments).
 */

export interface Fault {
  latencyMs?: number;
  status?: number;
  hang?: boolean;
  rejectToken?: boolean;
}

const PAGE = 2;
const TOKEN = /^Bearer (tok_[A-Za-z0-9]{8,})$/;

export class BrokerageEmulator {
  readonly faults: Record<string, Fault> = {};
  readonly calls: Record<string, number> = {};
  private readonly server = http.createServer((req, res) => void this.handle(req, res));

  async listen(port = 0, host = '127.0.0.1'): Promise<string> {
    await new Promise<void>((resolve) => this.server.listen(port, host, resolve));
    return `http://${host}:${(this.server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://emulator');
    const send = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/emulator/faults') {
      if (req.method === 'DELETE') for (const key of Object.keys(this.faults)) delete this.faults[key];
      if (req.method === 'PUT') Object.assign(this.faults, JSON.parse(await readBody(req)));
      return send(200, this.faults);
    }

    const route = this.route(url);
    if (!route) return send(404, { error: 'not found' });
    this.calls[route.section] = (this.calls[route.section] ?? 0) + 1;
    const fault = this.faults[route.section] ?? {};
    if (fault.hang) return; // never answers: the caller's own bound must end the wait
    if (fault.latencyMs) await new Promise((r) => setTimeout(r, fault.latencyMs));
    if (fault.rejectToken || !TOKEN.test(req.headers.authorization ?? '')) return send(401, { error: 'invalid token' });
    if (fault.status) return send(fault.status, { error: `injected ${fault.status}` });
    return send(200, route.answer());
  }

  private route(url: URL): { section: string; answer: () => unknown } | undefined {
    const parts = url.pathname.split('/').filter(Boolean); // v1, accounts, id, portfolio|operations
    if (parts[0] !== 'v1') return undefined;
    if (parts[1] === 'accounts' && parts.length === 2) return { section: 'portfolio', answer: () => dataset.accounts };
    if (parts[1] === 'accounts' && parts[3] === 'portfolio') {
      return { section: 'portfolio', answer: () => ({ positions: (dataset.positions as Record<string, unknown[]>)[parts[2]] ?? [] }) };
    }
    if (parts[1] === 'accounts' && parts[3] === 'operations') {
      return {
        section: 'operations',
        answer: () => {
          const all = (dataset.operations as Record<string, unknown[]>)[parts[2]] ?? [];
          const start = Number(url.searchParams.get('cursor') ?? 0);
          const next = start + PAGE < all.length ? String(start + PAGE) : undefined;
          return { items: all.slice(start, start + PAGE), ...(next ? { next_cursor: next } : {}) };
        },
      };
    }
    if (parts[1] === 'events') return { section: 'events.refresh', answer: () => ({ items: dataset.events }) };
    if (parts[1] === 'instruments') {
      const ids = (url.searchParams.get('ids') ?? '').split(',').filter(Boolean);
      return { section: 'catalog.enrichment', answer: () => ({ items: dataset.instruments.filter((i) => ids.length === 0 || ids.includes(i.id)) }) };
    }
    return undefined;
  }
}
