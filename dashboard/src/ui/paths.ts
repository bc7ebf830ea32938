/** The dashboard's URL prefix on the API's origin, and its stable page paths (deep-linked by the API and the CLI). */
export const BASE = '/dashboard';
export const to = (path: string): string => `${BASE}${path === '/' ? '/' : path}`;
export const paths = {
  overview: '/',
  wallet: (id: string) => `/wallets/${encodeURIComponent(id)}`,
  newWallet: '/wallets/new',
  tokens: '/settings/pats',
  token: (id: string) => `/settings/pats/${encodeURIComponent(id)}`,
  sellers: '/sellers',
  seller: (id: string) => `/sellers/${encodeURIComponent(id)}`,
  claim: '/claim',
} as const;
