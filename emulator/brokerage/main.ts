import { BrokerageEmulator } from './emulator';

/** The brokerage emulator as a process (started by `npm start`): PORT. */
async function main() {
  const emulator = new BrokerageEmulator();
  const url = await emulator.listen(Number(process.env.PORT ?? 8090));
  process.stdout.write(`brokerage emulator listening on ${url}\n`);
  const stop = () => void emulator.close().then(() => process.exit(0));
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((err) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
