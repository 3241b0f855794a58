import { version } from '../package.json';

/** The deployed build's version: package.json's, inlined by the bundler. */
export const SERVICE_VERSION: string = version;
