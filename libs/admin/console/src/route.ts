/**
 * Where the user is, kept in the page's query string under the mount point (history.pushState): ?proposal=<id>,
 * ?run=<runId>, ?view=agents. Ids only: never a token.
 */
export type Route =
  | { readonly view: 'queue' }
  | { readonly view: 'proposal'; readonly id: string }
  | { readonly view: 'audit'; readonly runId: string }
  | { readonly view: 'agents' };

export function readRoute(search: string = window.location.search): Route {
  const q = new URLSearchParams(search);
  const proposal = q.get('proposal');
  if (proposal) return { view: 'proposal', id: proposal };
  const run = q.get('run');
  if (run) return { view: 'audit', runId: run };
  if (q.get('view') === 'agents') return { view: 'agents' };
  return { view: 'queue' };
}

export function hrefOf(route: Route): string {
  const path = window.location.pathname;
  switch (route.view) {
    case 'proposal':
      return `${path}?proposal=${encodeURIComponent(route.id)}`;
    case 'audit':
      return `${path}?run=${encodeURIComponent(route.runId)}`;
    case 'agents':
      return `${path}?view=agents`;
    default:
      return path;
  }
}
