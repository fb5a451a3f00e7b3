import { useState } from 'preact/hooks';
import type { ConsoleConfig } from './types';

/** Sign in with the application's own token: pasted here (kept in memory, or in this tab's sessionStorage if asked). */
export function SignIn(props: {
  config: ConsoleConfig;
  error: string | null;
  busy: boolean;
  onSignIn: (token: string, keep: boolean) => void;
}) {
  const [token, setToken] = useState('');
  const [keep, setKeep] = useState(false);
  const [missing, setMissing] = useState(false);
  return (
    <section aria-labelledby="signin-title" class="panel narrow">
      <h1 id="signin-title">Sign in</h1>
      <p>Sign in with your token from the application. It stays in this tab: never in the address bar, never in a cookie.</p>
      {props.config.loginUrl && (
        <p>
          <a href={props.config.loginUrl}>Sign in with the application</a>
        </p>
      )}
      <form
        onSubmit={(e) => {
          e.preventDefault();
          const t = token.trim();
          if (!t) {
            setMissing(true);
            return;
          }
          setMissing(false);
          props.onSignIn(t, keep);
          setToken('');
        }}
      >
        <div class="field">
          <label for="token">Access token</label>
          <input
            id="token"
            type="password"
            autoComplete="off"
            spellcheck={false}
            value={token}
            aria-invalid={missing ? 'true' : undefined}
            aria-describedby={missing ? 'token-error' : undefined}
            onInput={(e) => setToken(e.currentTarget.value)}
          />
          {missing && (
            <p id="token-error" class="error">
              Paste your token first.
            </p>
          )}
        </div>
        <div class="field check">
          <input id="keep" type="checkbox" checked={keep} onChange={(e) => setKeep(e.currentTarget.checked)} />
          <label for="keep">Keep me signed in in this tab</label>
        </div>
        <button type="submit" disabled={props.busy}>
          {props.busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
      {props.error && (
        <p class="error" role="alert">
          {props.error}
        </p>
      )}
    </section>
  );
}
