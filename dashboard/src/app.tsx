/** The pages and their stable URLs (the API's `settings_url` and `dashboard_url` and the CLI deep-link here). */
import { LocationProvider, Route, Router } from 'preact-iso';
import { CliHandoffPage } from './pages/cli-handoff';
import { ClaimPage } from './pages/claim';
import { CreateWalletPage } from './pages/create-wallet';
import { NotFoundPage } from './pages/not-found';
import { OverviewPage } from './pages/overview';
import { SellersPage } from './pages/sellers';
import { TokensPage } from './pages/tokens';
import { WalletPage } from './pages/wallet';
import { Layout } from './ui/layout';
import { BASE, to } from './ui/paths';

export function App() {
  return (
    <LocationProvider scope={BASE}>
      <Layout>
        <Router>
          <Route path={to('/')} component={OverviewPage} />
          <Route path={to('/cli-handoff')} component={CliHandoffPage} />
          <Route path={to('/wallets/new')} component={CreateWalletPage} />
          <Route path={to('/wallets/:id')} component={WalletPage} />
          <Route path={to('/settings/pats')} component={TokensPage} />
          <Route path={to('/settings/pats/:id')} component={TokensPage} />
          <Route path={to('/sellers')} component={SellersPage} />
          <Route path={to('/sellers/:id')} component={SellersPage} />
          <Route path={to('/claim')} component={ClaimPage} />
          <Route default component={NotFoundPage} />
        </Router>
      </Layout>
    </LocationProvider>
  );
}
