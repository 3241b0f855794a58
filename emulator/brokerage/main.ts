import { serveUntilSignalled } from '../http';
import { BrokerageEmulator } from './emulator';

/** The brokerage emulator as a process (started by `npm start`): PORT. */
serveUntilSignalled('brokerage emulator', new BrokerageEmulator(), 8090);
