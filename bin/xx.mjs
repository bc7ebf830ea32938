#!/usr/bin/env node
// The `xx` command: registers the TypeScript loader, then runs the CLI entry point.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
