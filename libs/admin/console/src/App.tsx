import { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
import { Api, ApiError, loadConfig } from './api';
import { AgentsView } from './AgentsView';
import { AuditView } from './AuditView';
import { has } from './decide';
import { ProposalView } from './ProposalView';
import { DEFAULT_QUEUE_STATE, QueueState, QueueView } from './QueueView';
import { hrefOf, readRoute, Route } from './route';
import { currentToken, forgetToken, keepToken } from './session';
import { SignIn } from './SignIn';
import type { ConsoleConfig, Session } from './types';

/** The console: config, sign-in, then the queue, a proposal, a run's audit trail, or the agents' policy health. */
export function App() {
  const [config, setConfig] = useState<ConsoleConfig | null>(null);
  const [configError, setConfigError] = useState<string | null>(null);
  const [session, setSession] = useState<Session | null>(null);
  const [api, setApi] = useState<Api | null>(null);
  const [signInError, setSignInError] = useState<string | null>(null);
  const [checking, setChecking] = useState(false);
  const [route, setRoute] = useState<Route>(() => readRoute());
  const [status, setStatus] = useState('');
  const [queueState, setQueueState] = useState<QueueState>(DEFAULT_QUEUE_STATE);
  const queueScroll = useRef(0);

  const announce = useCallback((message: string) => {
    // Cleared first so that the same message is announced again.
    setStatus('');
    window.setTimeout(() => setStatus(message), 30);
  }, []);

  const signIn = useCallback(async (cfg: ConsoleConfig, token: string, keep: boolean | null) => {
    setChecking(true);
    try {
      // A token refused at sign-in is told as such (below), not as a session that ended: there was none yet.
      let established = false;
      const candidate = new Api(cfg.apiBase, token, () => {
        if (!established) return;
        forgetToken();
        setSession(null);
        setApi(null);
        setSignInError('Your session ended (the token expired or is no longer accepted): sign in again.');
      });
      const s = await candidate.session();
      established = true;
      if (keep !== null) keepToken(token, keep);
      setApi(candidate);
      setSession(s);
      setSignInError(null);
      announce(`Signed in as ${s.userId}, tenant ${s.tenantId}.`);
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) {
        forgetToken();
        setSignInError('That token was not accepted (expired, or not signed by this application). Sign in again.');
      } else setSignInError(e instanceof Error ? e.message : String(e));
    } finally {
      setChecking(false);
    }
  }, []);

  useEffect(() => {
    loadConfig()
      .then((cfg) => {
        setConfig(cfg);
        document.title = cfg.title;
        const handed = currentToken();
        if (handed) void signIn(cfg, handed, null);
      })
      .catch((e: unknown) => setConfigError(e instanceof Error ? e.message : String(e)));
    const onPop = () => setRoute(readRoute());
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, [signIn]);

  const navigate = useCallback(
    (next: Route) => {
      if (route.view === 'queue') queueScroll.current = window.scrollY;
      if (next.view === 'proposal') setQueueState((q) => ({ ...q, selectedId: next.id }));
      window.history.pushState(null, '', hrefOf(next));
      setRoute(next);
    },
    [route],
  );

  useEffect(() => {
    if (route.view === 'queue') window.scrollTo(0, queueScroll.current);
    else window.scrollTo(0, 0);
  }, [route]);

  const signOut = () => {
    forgetToken();
    setSession(null);
    setApi(null);
    announce('Signed out.');
  };

  const nav = useMemo(() => {
    if (!session || !config) return null;
    const items: { route: Route; label: string }[] = [{ route: { view: 'queue' }, label: 'Pending queue' }];
    if (config.features.agents && has(session, session.agentsPermission))
      items.push({ route: { view: 'agents' }, label: 'Agents and policy health' });
    return items;
  }, [session, config]);

  return (
    <>
      <a class="skip-link" href="#main">
        Skip to main content
      </a>
      <header class="top">
        <p class="brand">{config?.title ?? 'Approvals console'}</p>
        {session && (
          <div class="who">
            <span>
              Signed in as <strong>{session.userId}</strong>, tenant <strong>{session.tenantId}</strong>
            </span>
            <button type="button" class="secondary" onClick={signOut}>
              Sign out
            </button>
          </div>
        )}
        {nav && (
          <nav aria-label="Console">
            <ul>
              {nav.map((n) => (
                <li key={n.label}>
                  <a
                    href={hrefOf(n.route)}
                    aria-current={route.view === n.route.view ? 'page' : undefined}
                    onClick={(e) => {
                      e.preventDefault();
                      navigate(n.route);
                    }}
                  >
                    {n.label}
                  </a>
                </li>
              ))}
            </ul>
          </nav>
        )}
      </header>
      <div class="status" role="status" aria-live="polite" aria-atomic="true">
        {status}
      </div>
      <main id="main" tabIndex={-1}>
        {configError && (
          <p class="error" role="alert">
            The console could not load its configuration: {configError}
          </p>
        )}
        {config && !session && (
          <SignIn config={config} error={signInError} busy={checking} onSignIn={(token, keep) => void signIn(config, token, keep)} />
        )}
        {config && session && api && (
          <>
            {route.view === 'queue' && (
              <QueueView
                api={api}
                session={session}
                config={config}
                state={queueState}
                onState={setQueueState}
                onOpen={(id) => navigate({ view: 'proposal', id })}
              />
            )}
            {route.view === 'proposal' && (
              <ProposalView
                key={route.id}
                id={route.id}
                api={api}
                session={session}
                config={config}
                announce={announce}
                onBack={() => navigate({ view: 'queue' })}
                onAudit={(runId) => navigate({ view: 'audit', runId })}
              />
            )}
            {route.view === 'audit' && <AuditView key={route.runId} runId={route.runId} api={api} session={session} config={config} />}
            {route.view === 'agents' && <AgentsView api={api} session={session} config={config} />}
          </>
        )}
      </main>
    </>
  );
}
