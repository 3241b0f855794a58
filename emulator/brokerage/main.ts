import { serveUntilSignalled } from '../http';
import { BrokerageEmulator } from './emulator';

/** The T-Bank emulator as a process (started by `npm start`): PORT; BROKERAGE_RATE_WINDOW_MS scales the rate-limit "minute". */
const windowMs = Number(process.env.BROKERAGE_RATE_WINDOW_MS ?? 60_000);
serveUntilSignalled(
  'brokerage emulator',
  new BrokerageEmulator({ windowMs: Number.isFinite(windowMs) && windowMs >= 100 ? windowMs : 60_000 }),
  8090,
);
