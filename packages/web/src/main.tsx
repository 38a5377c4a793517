/**
 * Cinder's web app (served at /): reclaim a wallet's token-account rent with a browser wallet, and
 * generate wallets.
 */
import { render } from 'preact';
import { useState } from 'preact/hooks';
import { apiKey } from './api.ts';
import { ReclaimView } from './ReclaimView.tsx';
import { WalletsView } from './WalletsView.tsx';
import { CLUSTER, KEY_REQUIRED } from './settings.ts';


function KeyForm({ refused, onSaved }: { refused: boolean; onSaved: () => void }) {
  const [value, setValue] = useState('');
  return (
    <form
      class="panel key-form"
      onSubmit={(event) => {
        event.preventDefault();
        if (!value.trim()) return;
        apiKey.set(value.trim());
        setValue('');
        onSaved();
      }}
    >
      <h2>API key</h2>
      <p>
        {refused ? 'The server did not accept that key. ' : ''}This Cinder server asks for an API key. It is kept in this browser tab only and forgotten when the tab
        closes.
      </p>
      <label for="api-key">API key</label>
      <div class="row">
        <input id="api-key" type="password" autocomplete="off" value={value} onInput={(event) => setValue(event.currentTarget.value)} />
        <button type="submit" class="primary">
          Use this key
        </button>
      </div>
    </form>
  );
}

function App() {
  const [view, setView] = useState<'reclaim' | 'wallets'>('reclaim');
  const [needKey, setNeedKey] = useState(KEY_REQUIRED && !apiKey.get());
  const [keyRefused, setKeyRefused] = useState(false);
  // Bumped when a key is entered, so the views ask the server again with it.
  const [keyVersion, setKeyVersion] = useState(0);
  const onUnauthorized = () => {
    apiKey.clear();
    setKeyRefused(true);
    setNeedKey(true);
  };
  const tab = (name: typeof view, label: string) => (
    <button type="button" class={view === name ? 'tab current' : 'tab'} aria-current={view === name ? 'page' : undefined} onClick={() => setView(name)}>
      {label}
    </button>
  );
  return (
    <>
      <header class="top">
        <div class="brand">
          <img src="/app/icon.svg" alt="" width={28} height={28} />
          <span>Cinder</span>
        </div>
        <nav aria-label="Views">
          {tab('reclaim', 'Reclaim rent')}
          {tab('wallets', 'Generate wallets')}
        </nav>
      </header>
      <main>
        {needKey ? (
          <KeyForm
            refused={keyRefused}
            onSaved={() => {
              setNeedKey(false);
              setKeyRefused(false);
              setKeyVersion((v) => v + 1);
            }}
          />
        ) : view === 'reclaim' ? (
          <ReclaimView key={keyVersion} cluster={CLUSTER} onUnauthorized={onUnauthorized} />
        ) : (
          <WalletsView key={keyVersion} onUnauthorized={onUnauthorized} />
        )}
      </main>
      <footer class="bottom">
        Cinder never asks for a private key: your wallet signs. <a href="/docs">API documentation</a>
      </footer>
    </>
  );
}

render(<App />, document.getElementById('app')!);
