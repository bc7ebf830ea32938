/**
 * Entry point of the `xx` CLI (bin/xx.mjs imports this). Exits with the command's code once it is done
 * (idle keep-alive sockets do not hold the process); Ctrl-C exits 130.
 */
import { runCli } from './program.js';

process.on('SIGINT', () => process.exit(130));
const code = await runCli(process.argv);
process.exit(code);
