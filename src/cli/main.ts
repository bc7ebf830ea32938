/**
 * Entry point of the `xx` CLI (bin/xx.mjs imports this). Exits with the command's code once it is done
 * (idle keep-alive sockets do not hold the process); Ctrl-C exits 130. Before exiting it waits until stdout
 * and stderr have handed everything written to the OS: writes to a pipe are asynchronous, and an exit
 * right after a large `--json` answer would cut it off (at 64 KiB, a pipe's buffer).
 */
import { runCli } from './program.js';

/** Resolves once everything written to `stream` before it has been flushed (or the stream has failed). */
const flushed = (stream: NodeJS.WriteStream) => new Promise<void>((resolve) => stream.write('', () => resolve()));

process.on('SIGINT', () => process.exit(130));
const code = await runCli(process.argv);
await Promise.all([flushed(process.stdout), flushed(process.stderr)]);
process.exit(code);
