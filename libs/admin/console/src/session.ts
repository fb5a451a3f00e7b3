/**
 * The token store. The token lives in memory, or in sessionStorage when the user asks to stay signed in in this tab
 * (or when the application's login page handed it over there). Never in a URL, never in localStorage, never in a cookie.
 */
export const HANDOFF_KEY = 'zmodu.console.token';

let memory: string | null = null;

function storage(): Storage | null {
  try {
    return window.sessionStorage;
  } catch {
    return null;
  }
}

/** The token to use: the one in memory, else the one in sessionStorage (a handoff or "keep me signed in"). */
export function currentToken(): string | null {
  if (memory) return memory;
  const stored = storage()?.getItem(HANDOFF_KEY) ?? null;
  if (stored) memory = stored;
  return memory;
}

export function keepToken(token: string, inTab: boolean): void {
  memory = token;
  const s = storage();
  if (inTab) s?.setItem(HANDOFF_KEY, token);
  else s?.removeItem(HANDOFF_KEY);
}

export function forgetToken(): void {
  memory = null;
  storage()?.removeItem(HANDOFF_KEY);
}
