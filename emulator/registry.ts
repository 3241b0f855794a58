import type { RunningService } from './stack/process';
import type { ServiceContext } from './stack/services';

/**
 * Emulators of the systems around us (scanner, torrent client, brokerage API),
 * started by `npm start` after the resources exist. Each domain adds its own.
 */
export interface EmulatorSpec {
  name: string;
  start(ctx: ServiceContext, env: Record<string, string>): Promise<RunningService>;
}

export const emulators: EmulatorSpec[] = [];
