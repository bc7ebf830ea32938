/**
 * Stylesheets imported for their side effect (`import './styles.css'`): Vite bundles them; to the type checker
 * they are modules with nothing in them, so `npm run typecheck:dashboard` can check the imports that name them.
 */
declare module '*.css';
