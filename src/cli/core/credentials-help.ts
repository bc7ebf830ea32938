/**
 * The credentials paragraph of `xx --help` (which bearer the buyer commands use, first found wins). Its own
 * module so the light start-up path (src/cli/program.ts) prints it without loading the credential code.
 */
export const CREDENTIALS_HELP = `
Credentials (buy, fund, agent, history, whoami, mcp), first found wins:
  1. --profile <name>     a profile of the credentials file (xx login --profile <name>)
  2. XX_PAT               an agent PAT in the environment (headless: CI, agent hosts, xx mcp)
  3. the active profile   set by xx login / xx profile switch / xx init
  4. the active agent     the record xx init wrote (xx agent switch)
XX_API_URL, when set, names the server for every one of them.
`;
