/**
 * `node --import <this file>?preload=<file URL of a .ts module>`: imports one of the benches' TypeScript probes
 * (./loop-probe.ts) into a service that runs its compiled build, without putting tsx in front of the service's own
 * modules. `--import tsx` would: its loader transforms every module the process loads, and it turns Node's source
 * maps on, so the API's 4.7 MB bundle was kept as tsx's output with an inline map (19 million characters) and
 * that map's decoded mappings beside it — about 60 MB of the API's 108 MB old generation in `npm run bench`,
 * none of which the service holds when it starts as `npm run start:api` starts it. Here tsx's `tsImport`
 * transforms only what it imports, and source maps are put back as they were before.
 *
 * Plain JavaScript because it must load before anything can read TypeScript. Loaded only by the benches
 * (./service-bench-parts.ts); nothing in the services imports it.
 */
import { tsImport } from 'tsx/esm/api';

const preload = new URL(import.meta.url).searchParams.get('preload');
if (!preload) throw new Error('ts-preload: no ?preload=<file URL> given');
const sourceMaps = process.sourceMapsEnabled;
await tsImport(preload, import.meta.url);
process.setSourceMapsEnabled(sourceMaps);
