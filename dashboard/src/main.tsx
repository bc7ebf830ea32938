/**
 * The dashboard's entry: takes the CLI handoff fragment out of the address bar before anything else runs,
 * then renders the pages. Served by the API under /dashboard/ with a strict CSP (src/api/http/dashboard-static.ts).
 */
import { render } from 'preact';
import { captureHandoff } from './api/handoff';
import { App } from './app';
import './styles.css';

captureHandoff();
render(<App />, document.getElementById('app')!);
