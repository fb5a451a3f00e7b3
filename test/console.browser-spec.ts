import { INestApplication } from '@nestjs/common';
import { AgentWorker } from '@zmodu/agent';
import { AgentAuditLog, Guard } from '@zmodu/guard';
import { createSkillContext, SkillDispatcher } from '@zmodu/skills';
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { mintToken } from '../apps/sample/src/auth/dev-token';
import { sampleAppsOnTestDatabase } from './support/sample-apps';

/**
 * The approvals console in a real headless Chromium (Debian's /usr/bin/chromium, driven by playwright-core) against the
 * sample app listening on a port: sign-in, the queue of one tenant, decisions, edits, conflicts, who may decide;
 * accessibility (axe-core, keyboard only, 640 CSS px), and the token never in a URL. Writes docs/screenshots/*.png.
 */
// What the functions run in the page read there (this file compiles without the DOM library).
declare const window: unknown;
declare const document: {
  readonly activeElement: PageElement | null;
  readonly documentElement: { readonly scrollWidth: number; readonly clientWidth: number };
  readonly cookie: string;
};
declare const sessionStorage: { getItem(key: string): string | null; setItem(key: string, value: string): void };
declare const localStorage: { readonly length: number };
interface PageElement {
  readonly id: string;
  readonly tagName: string;
  readonly textContent: string | null;
}

const SECRET = 'console-browser-secret-that-is-long-enough-0123456789';
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const SHOTS = join(__dirname, '..', 'docs', 'screenshots');

const token = (user: string, permissions?: string[], tenant = 'acme') => mintToken(SECRET, { tenant, user, permissions });
const APPROVER = ['approval:decide', 'desk:lead', 'admin:audit', 'admin:agents'];

interface Order {
  readonly symbol: string;
  readonly side: 'buy' | 'sell';
  readonly qty: number;
  readonly limitPrice: number;
}

describe('the approvals console in a browser', () => {
  // Its afterAll drops the database: after the inner block's afterAll closed the app.
  const apps = sampleAppsOnTestDatabase(SECRET);
  describe('against the sample app on a port', () => {
    let app: INestApplication;
    let base: string;
    let browser: Browser;
    const contexts: BrowserContext[] = [];
    /** Every URL the pages asked for, and every token handed to a page: no URL may hold a token. */
    const requested: string[] = [];
    const tokens = new Set<string>();
    /** What the console's Content-Security-Policy refused in the pages (nothing: no inline script or style). */
    const refused: string[] = [];

    beforeAll(async () => {
      app = await apps.boot();
      apps.forget(); // one app for the whole file, closed in afterAll
      await app.listen(0, '127.0.0.1');
      base = (await app.getUrl()).replace('[::1]', '127.0.0.1');
      browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox'] });
      mkdirSync(SHOTS, { recursive: true });
    });

    afterEach(async () => {
      for (const c of contexts.splice(0)) await c.close();
      // The token never travelled in a URL: no request and no navigation of this test's pages held one.
      const urls = requested.splice(0);
      const held = [...tokens].flatMap((t) => urls.filter((u) => u.includes(t)));
      tokens.clear();
      expect(urls.length).toBeGreaterThan(0);
      expect(held).toEqual([]);
      expect(refused.splice(0)).toEqual([]);
    });

    afterAll(async () => {
      await browser?.close();
      await app?.close();
    });

    async function newPage(viewport = { width: 1280, height: 900 }): Promise<Page> {
      const context = await browser.newContext({ viewport });
      contexts.push(context);
      const page = await context.newPage();
      page.on('request', (r) => requested.push(r.url()));
      page.on('framenavigated', (f) => requested.push(f.url()));
      page.on('console', (m) => {
        if (m.type() === 'error' && /Content Security Policy/i.test(m.text())) refused.push(m.text());
      });
      return page;
    }

    async function signIn(page: Page, user: string, permissions?: string[], tenant = 'acme'): Promise<string> {
      const t = token(user, permissions, tenant);
      tokens.add(t);
      await page.goto(`${base}/admin/console`);
      await page.getByLabel('Access token').fill(t);
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.getByRole('heading', { level: 1, name: 'Pending approvals' }).waitFor();
      expect(page.url()).not.toContain(t);
      return t;
    }

    /** A proposal of `order` by `user` (permission order:submit), as the desk agent's approval.submit makes it. */
    async function propose(order: Order, user = 'alice', tenant = 'acme'): Promise<{ id: string; amount: number; verdict: string }> {
      const ctx = createSkillContext({
        guard: new Guard({ allow: ['approval.submit', 'order.submit'], allowExecute: true }),
        tenantId: tenant,
        userId: user,
        permissions: ['order:submit'],
        agent: 'desk',
      });
      const r = await app.get(SkillDispatcher).dispatch(ctx, 'approval.submit', { action: 'order.submit', payload: order });
      const v = r.value as { proposalId: string; amount: number; verdict: string };
      expect(v.verdict).toBe('needs_human');
      return { id: v.proposalId, amount: v.amount, verdict: v.verdict };
    }

    async function http(
      method: string,
      path: string,
      bearer: string,
      body?: unknown,
    ): Promise<{ status: number; body: Record<string, unknown> }> {
      const res = await fetch(`${base}${path}`, {
        method,
        headers: { Authorization: `Bearer ${bearer}`, 'Content-Type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    }

    const row = (page: Page, id: string) => page.locator(`tr[data-id="${id}"]`);

    async function openProposal(page: Page, id: string): Promise<void> {
      await row(page, id).getByRole('link').click();
      await page.getByRole('heading', { level: 2, name: 'Your decision' }).waitFor();
    }

    async function axe(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
      // The console's CSP (script-src 'self') refuses an injected <script>: axe runs as an evaluated script instead.
      await page.evaluate(AXE_SOURCE);
      return page.evaluate(async () => {
        const w = window as unknown as {
          axe: { run: () => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }> };
        };
        const r = await w.axe.run();
        return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
      });
    }
    const serious = (v: { impact: string }[]) => v.filter((x) => x.impact === 'serious' || x.impact === 'critical');

    it('an approver of acme signs in, sees only acme pending proposals, approves one and sees it executed', async () => {
      const mine = await propose({ symbol: 'ACME', side: 'buy', qty: 100, limitPrice: 101.25 });
      const other = await propose({ symbol: 'GLOBEX', side: 'buy', qty: 1000, limitPrice: 48.1 }, 'bob');
      const globex = await propose({ symbol: 'HOOLI', side: 'buy', qty: 50, limitPrice: 310 }, 'gina', 'globex');
      const page = await newPage();
      await signIn(page, 'lee', APPROVER);
      await row(page, mine.id).waitFor();
      const ids = await page.locator('tbody tr[data-id]').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-id')));
      expect(ids).toEqual(expect.arrayContaining([mine.id, other.id]));
      expect(ids).not.toContain(globex.id);
      const acmePending = (await http('GET', '/admin/approvals?status=pending&limit=100', token('lee', APPROVER))).body as {
        items: { id: string }[];
      };
      expect([...ids].sort()).toEqual(acmePending.items.map((p) => p.id).sort());
      await expect(row(page, mine.id).textContent()).resolves.toMatch(/qty 100 · side buy · symbol ACME/);
      await expect(row(page, mine.id).textContent()).resolves.toMatch(/desk lead.*needs desk:lead/);
      await expect(row(page, mine.id).textContent()).resolves.toMatch(/10,125/);
      await expect(row(page, mine.id).textContent()).resolves.toMatch(/23 h \d+ min/);
      await page.screenshot({ path: join(SHOTS, 'console-queue.png'), fullPage: true });

      await openProposal(page, mine.id);
      expect(page.url()).toContain(`proposal=${mine.id}`);
      await page.getByLabel('Reason for your decision (required)').fill('within the desk mandate');
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
      await expect(page.locator('.outcome').textContent({ timeout: 10_000 })).resolves.toMatch(/Approved and executed/);
      await page.locator('.tag.status-executed').waitFor();
      await expect(page.getByRole('button', { name: 'Approve', exact: true }).count()).resolves.toBe(0);
      await expect(page.getByRole('status').textContent()).resolves.toMatch(/Approved and executed/);
      const done = await http('GET', `/admin/approvals/${mine.id}`, token('lee', APPROVER));
      expect(done.body).toMatchObject({ status: 'executed', decisions: [{ decidedBy: 'lee', reason: 'within the desk mandate' }] });

      // Back to the queue: the executed proposal is gone, the other one is still there.
      await page.getByRole('button', { name: /Back to the queue/ }).click();
      await row(page, other.id).waitFor();
      await expect(row(page, mine.id).count()).resolves.toBe(0);
    });

    it('approve with an edit that crosses a threshold: the preview shows the new amount and the extra step', async () => {
      const p = await propose({ symbol: 'ACME', side: 'buy', qty: 200, limitPrice: 101.25 });
      const page = await newPage();
      await signIn(page, 'lee', APPROVER);
      await row(page, p.id).waitFor();
      await openProposal(page, p.id);
      await page.getByRole('button', { name: 'Approve with edits…' }).click();
      const qty = page.getByLabel(/^Qty/);
      // Over the tenant limit: the preview says it cannot apply, and there is nothing to approve.
      await qty.fill('5000');
      await page.getByRole('button', { name: 'Preview the edit' }).click();
      await expect(page.locator('#preview-result').textContent()).resolves.toMatch(/This edit cannot apply: .*tenant limit/);
      await expect(page.getByRole('button', { name: 'Approve with these edits' }).count()).resolves.toBe(0);
      await qty.fill('1000');
      await page.getByRole('button', { name: 'Preview the edit' }).click();
      const preview = page.locator('#preview-result');
      await expect(preview.textContent()).resolves.toMatch(/20,250 → 101,250/);
      await expect(preview.textContent()).resolves.toMatch(/This edit adds a step: second approver \(approval:decide\)/);
      await page.getByLabel('Reason for your decision (required)').fill('the client wants 1000');
      await page.getByRole('button', { name: 'Approve with these edits' }).click();
      await expect(page.locator('.outcome').textContent({ timeout: 10_000 })).resolves.toMatch(
        /It now waits for: desk lead.*second approver/,
      );
      const after = (await http('GET', `/admin/approvals/${p.id}`, token('lee', APPROVER))).body;
      expect(after).toMatchObject({
        status: 'pending',
        amount: 101_250,
        payload: { qty: 1000 },
        decisions: [{ decidedBy: 'lee', edit: { before: { amount: 20_250 }, after: { amount: 101_250 } } }],
      });
      // lee has decided once: another person signs the steps of the new chain.
      await expect(page.locator('#why-not').textContent()).resolves.toMatch(/You decided step 1 already/);
    });

    it('a proposal changed by someone else meanwhile: the decision is refused, the change shown, and made again on the new version', async () => {
      const p = await propose({ symbol: 'ACME', side: 'buy', qty: 1000, limitPrice: 101.25 });
      const page = await newPage();
      await signIn(page, 'lee', APPROVER);
      await row(page, p.id).waitFor();
      await openProposal(page, p.id);
      // max edits it down to 900 (one step now) while lee reads version 1.
      const edited = await http('POST', `/admin/approvals/${p.id}/approve`, token('max', APPROVER), {
        reason: 'trim it',
        version: 1,
        step: 0,
        payload: { symbol: 'ACME', side: 'buy', qty: 900, limitPrice: 101.25 },
      });
      expect(edited.status).toBe(200);
      await page.getByLabel('Reason for your decision (required)').fill('fine');
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
      const panel = page.locator('section.conflict');
      await panel.waitFor({ timeout: 10_000 });
      const shown = (await panel.textContent()) ?? '';
      expect(shown).toMatch(/Not applied: this proposal changed since you read it/);
      expect(shown).toMatch(/Payload: qty\s*1,000\s*900/);
      expect(shown).toMatch(/Amount\s*101,250\s*91,125/);
      expect(shown).toMatch(/max approved, with an edit/);
      const stillPending = (await http('GET', `/admin/approvals/${p.id}`, token('lee', APPROVER))).body;
      expect(stillPending).toMatchObject({ status: 'pending', version: 2, decisions: [{ decidedBy: 'max' }] });
      // The page shows version 2 now: lee decides again, on it.
      await page.getByLabel('Reason for your decision (required)').fill('fine at 900');
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
      await expect(page.locator('.outcome').textContent({ timeout: 10_000 })).resolves.toMatch(/Approved and executed/);
      const done = (await http('GET', `/admin/approvals/${p.id}`, token('lee', APPROVER))).body;
      expect(done).toMatchObject({
        status: 'executed',
        payload: { qty: 900 },
        decisions: [{ decidedBy: 'max' }, { decidedBy: 'lee', version: 2 }],
      });
    });

    it("a user without the waiting step's permission sees no buttons, and a direct POST is refused", async () => {
      const p = await propose({ symbol: 'ACME', side: 'buy', qty: 150, limitPrice: 101.25 });
      const page = await newPage();
      const vic = await signIn(page, 'vic', ['approval:decide']);
      await row(page, p.id).waitFor();
      await expect(row(page, p.id).textContent()).resolves.toMatch(/View only/);
      await openProposal(page, p.id);
      await expect(page.locator('#why-not').textContent()).resolves.toMatch(
        /desk lead, needs the permission desk:lead, which you do not hold/,
      );
      for (const name of ['Approve', 'Reject', 'Approve with edits…'])
        await expect(page.getByRole('button', { name, exact: true }).count()).resolves.toBe(0);
      // The page's own origin, the same token: the server refuses it anyway.
      const direct = await page.evaluate(
        async ([id, t]) => {
          const res = await fetch(`/admin/approvals/${id}/approve`, {
            method: 'POST',
            headers: { Authorization: `Bearer ${t}`, 'Content-Type': 'application/json' },
            body: JSON.stringify({ reason: 'let me', version: 1, step: 0 }),
          });
          return { status: res.status, body: (await res.json()) as { message: string } };
        },
        [p.id, vic] as const,
      );
      expect(direct.status).toBe(403);
      expect(direct.body.message).toMatch(/desk:lead/);
      expect((await http('GET', `/admin/approvals/${p.id}`, token('lee', APPROVER))).body).toMatchObject({
        status: 'pending',
        decisions: [],
      });
    });

    it('the proposer cannot approve their own: no buttons, "you proposed this", and the server refuses it', async () => {
      const p = await propose({ symbol: 'ACME', side: 'buy', qty: 120, limitPrice: 101.25 }, 'carol');
      const page = await newPage();
      const carol = await signIn(page, 'carol', APPROVER);
      await row(page, p.id).waitFor();
      await expect(row(page, p.id).textContent()).resolves.toMatch(/You proposed this/);
      await openProposal(page, p.id);
      await expect(page.locator('#why-not').textContent()).resolves.toBe('You proposed this: someone else must decide it.');
      await expect(page.getByRole('button', { name: 'Approve', exact: true }).count()).resolves.toBe(0);
      const direct = await http('POST', `/admin/approvals/${p.id}/approve`, carol, { reason: 'mine', version: 1, step: 0 });
      expect(direct.status).toBe(403);
    });

    it("signs in from the application's login handoff (sessionStorage), and signs out clearing it", async () => {
      const page = await newPage();
      const t = token('lee', APPROVER);
      tokens.add(t);
      await page.goto(`${base}/health`);
      await page.evaluate((v) => sessionStorage.setItem('zmodu.console.token', v), t);
      await page.goto(`${base}/admin/console`);
      await page.getByRole('heading', { level: 1, name: 'Pending approvals' }).waitFor();
      await expect(page.locator('.who').textContent()).resolves.toMatch(/Signed in as lee, tenant acme/);
      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.getByRole('heading', { level: 1, name: 'Sign in' }).waitFor();
      await expect(
        page.evaluate(() => [sessionStorage.getItem('zmodu.console.token'), localStorage.length, document.cookie]),
      ).resolves.toEqual([null, 0, '']);
      // A token that is not the application's is refused at sign-in.
      await page
        .getByLabel('Access token')
        .fill(mintToken('another-secret-that-is-also-long-enough-000000', { tenant: 'acme', user: 'x' }));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await expect(page.getByRole('alert').textContent()).resolves.toMatch(/not accepted/);
    });

    it('keyboard only: the queue sorts from its column headers and a proposal opens with Tab and Enter; the polled queue keeps the place', async () => {
      const a = await propose({ symbol: 'GLOBEX', side: 'buy', qty: 900, limitPrice: 48.1 }, 'dora');
      const b = await propose({ symbol: 'ACME', side: 'buy', qty: 300, limitPrice: 101.25 }, 'dora');
      const page = await newPage();
      await signIn(page, 'lee', APPROVER);
      await row(page, a.id).waitFor();
      // Sort by amount with the keyboard: Tab until the sort button has focus, then Enter.
      await tabTo(page, (el) => el.textContent?.startsWith('Amount') === true && el.tagName === 'BUTTON');
      await page.keyboard.press('Enter');
      await page.locator('th[aria-sort="descending"]').waitFor();
      await expect(page.locator('th[aria-sort]').textContent()).resolves.toMatch(/^Amount/);
      const amounts = await page.locator('tbody td[data-label="Amount"]').allTextContents();
      const numbers = amounts.map((x) => Number(x.replace(/,/g, '')));
      expect(numbers).toEqual([...numbers].sort((x, y) => y - x));
      // Filter to the dora proposals, Tab to b's link; a new proposal arrives by polling; the focus and filter stay.
      await page.getByLabel('Filter', { exact: true }).fill('dora');
      await tabTo(page, (el, id) => el.id === id, `open-${b.id}`);
      const c = await propose({ symbol: 'ACME', side: 'buy', qty: 110, limitPrice: 101.25 }, 'dora');
      await row(page, c.id).waitFor({ timeout: 20_000 });
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe(`open-${b.id}`);
      await expect(page.getByLabel('Filter', { exact: true }).inputValue()).resolves.toBe('dora');
      await expect(page.locator('th[aria-sort]').getAttribute('aria-sort')).resolves.toBe('descending');
      await page.keyboard.press('Enter');
      await page.getByRole('heading', { level: 2, name: 'Your decision' }).waitFor();
      await expect(page.locator('h1').textContent()).resolves.toMatch(/order\.submit: qty 300 · side buy · symbol ACME/);
      // Reach the reason field and the Approve button by keyboard.
      await tabTo(page, (el) => el.id === 'reason');
      await page.keyboard.type('ok by keyboard');
      await tabTo(page, (el) => el.tagName === 'BUTTON' && el.textContent === 'Approve');
      await page.keyboard.press('Enter');
      await expect(page.locator('.outcome').textContent({ timeout: 10_000 })).resolves.toMatch(/Approved and executed/);
    });

    /** Press Tab until the focused element satisfies `want` (run in the page, with `arg`: it closes over nothing). */
    async function tabTo(page: Page, want: (el: PageElement, arg: string) => boolean, arg = '', max = 80): Promise<void> {
      const source = `(${want.toString()})(document.activeElement, ${JSON.stringify(arg)})`;
      for (let i = 0; i < max; i++) {
        await page.keyboard.press('Tab');
        if (await page.evaluate(source)) return;
      }
      throw new Error(`no focusable element matched ${want.toString()} within ${max} Tab presses`);
    }

    /** The desk agent's run through the worker: it waits for a desk lead on one of its orders; that pending proposal. */
    async function deskRunWaiting(): Promise<{ runId: string; made: { id: string; runId: string | null } }> {
      const worker = app.get(AgentWorker);
      const waiting = new Promise<string>((resolve) =>
        worker.onResult((r) => {
          if (r.status === 'waiting') resolve(r.id);
        }),
      );
      const { runId } = await worker.post('place the orders', {
        agent: 'desk',
        tenantId: 'acme',
        userId: 'alice',
        permissions: ['agent:run', 'order:submit'],
      });
      expect(await waiting).toBe(runId);
      await app.get(AgentAuditLog).flush();
      const list = (await http('GET', '/admin/approvals?status=pending&limit=100', token('lee', APPROVER))).body as {
        items: { id: string; runId: string | null }[];
      };
      const made = list.items.find((p) => p.runId === runId);
      if (!made) throw new Error(`no pending proposal of run ${runId}`);
      return { runId, made };
    }

    it('axe-core finds no serious or critical violation on the queue and on a proposal (with its run); screenshots', async () => {
      // The desk agent's run through the worker (which stores the run): one of its orders waits for a desk lead.
      const { made } = await deskRunWaiting();

      const page = await newPage();
      await signIn(page, 'lee', APPROVER);
      await row(page, made.id).waitFor();
      expect(serious(await axe(page))).toEqual([]);
      await openProposal(page, made.id);
      const run = page.locator('section[aria-labelledby="run-title"]');
      await run.locator('ol.steps table.calls').first().waitFor({ timeout: 10_000 });
      await expect(run.locator('ol.steps').textContent()).resolves.toMatch(/Step 1.*Proposing three orders.*approval\.submit.*allowed/s);
      // The run waits for this decision: the console says so (its slot given back, it goes on once decided).
      await expect(run.textContent()).resolves.toMatch(/Goalplace the orders.*Statuswaiting.*Waits forthe decision on this proposal/s);
      await page.getByRole('button', { name: 'Approve with edits…' }).click();
      await page.getByLabel(/^Qty/).fill('2500');
      await page.getByRole('button', { name: 'Preview the edit' }).click();
      await expect(page.locator('#preview-result').textContent()).resolves.toMatch(/This edit adds a step: second approver/);
      expect(serious(await axe(page))).toEqual([]);
      await page.screenshot({ path: join(SHOTS, 'console-proposal.png'), fullPage: true });

      // The run's full audit trail (admin:audit), and the agents' policy health (admin:agents).
      await page.getByRole('button', { name: /Open the full audit trail of run/ }).click();
      await page.getByRole('heading', { level: 1, name: /Audit trail of run/ }).waitFor();
      await page.locator('tbody th[data-label="Skill"]').first().waitFor();
      await expect(page.locator('tbody th[data-label="Skill"]').allTextContents()).resolves.toEqual(
        expect.arrayContaining([expect.stringMatching(/^approval\.submit/), expect.stringMatching(/^order\.submit/)]),
      );
      await page.getByRole('link', { name: 'Agents and policy health' }).click();
      await page.getByRole('heading', { level: 2, name: /^desk/ }).waitFor();
      await expect(page.locator('ul.cards > li').count()).resolves.toBeGreaterThanOrEqual(5);
      expect(serious(await axe(page))).toEqual([]);
    });

    it('shows the run a proposal belongs to waiting for the decision, then what the agent did after it', async () => {
      const { runId, made } = await deskRunWaiting();
      expect(made.runId).toBe(runId);
      const page = await newPage();
      await signIn(page, 'lee', APPROVER);
      await row(page, made.id).waitFor();
      await openProposal(page, made.id);
      const run = page.locator('section[aria-labelledby="run-title"]');
      await run.locator('ol.steps table.calls').first().waitFor({ timeout: 10_000 });
      await expect(run.textContent()).resolves.toMatch(/Statuswaiting.*Waits forthe decision on this proposal/s);
      await expect(run.getByRole('heading', { name: 'After the decision' }).count()).resolves.toBe(0);

      await page.getByLabel('Reason for your decision (required)').fill('fine for the desk');
      await page.getByRole('button', { name: 'Approve', exact: true }).click();
      await expect(page.locator('.outcome').textContent({ timeout: 10_000 })).resolves.toMatch(/Approved and executed/);
      // The panel reads the run again: it went on with the decision as its proposal's result, and ended.
      await run.getByRole('heading', { name: 'After the decision' }).waitFor({ timeout: 15_000 });
      await expect(run.locator('dl.facts').textContent({ timeout: 15_000 })).resolves.toMatch(/Statussucceeded/);
      await expect(run.textContent()).resolves.toMatch(/Decision told to the agentexecuted/);
      await expect(run.locator('ol.steps-after').textContent()).resolves.toMatch(/Orders placed: .*executed/);
      const stored = (await http('GET', `/admin/approvals/${made.id}/run`, token('lee', APPROVER))).body as {
        run: { status: string; decisions: { proposalId: string; status: string }[]; proposedAtStep: number };
      };
      expect(stored.run).toMatchObject({
        status: 'succeeded',
        decisions: [{ proposalId: made.id, status: 'executed' }],
        proposedAtStep: 0,
      });
      expect(serious(await axe(page))).toEqual([]);
    });

    it('the agents page highlights a blind spot in a policy health report', async () => {
      const page = await newPage();
      await signIn(page, 'lee', APPROVER);
      // The sample's agents are all healthy: one report is given a class blind spot on its way to the page.
      await page.route('**/admin/agents', async (route) => {
        const res = await route.fetch();
        const body = (await res.json()) as { agents: { name: string; needsAttention: boolean; health: Record<string, unknown> }[] };
        const trader = body.agents.find((a) => a.name === 'trader');
        if (!trader) throw new Error('no trader agent in GET /admin/agents');
        trader.needsAttention = true;
        trader.health = { ...trader.health, hasClassBlindSpot: true, classDeniedTools: ['order.submit'] };
        await route.fulfill({ response: res, json: body });
      });
      await page.getByRole('link', { name: 'Agents and policy health' }).click();
      const trader = page.locator('li.card', { has: page.getByRole('heading', { level: 2, name: /^trader/ }) });
      await trader.waitFor();
      await expect(trader.getAttribute('class')).resolves.toBe('card attention');
      await expect(trader.locator('.blind-spots').textContent()).resolves.toMatch(
        /Blind spots.*refused by the execute class gate.*order\.submit/s,
      );
      const analyst = page.locator('li.card', { has: page.getByRole('heading', { level: 2, name: /^analyst/ }) });
      await expect(analyst.textContent()).resolves.toMatch(/Healthy.*No blind spot/s);
    });

    it('at 640 CSS px (200% zoom of 1280) neither the queue nor a proposal scrolls sideways', async () => {
      const p = await propose({ symbol: 'ACME', side: 'buy', qty: 1000, limitPrice: 101.25 }, 'erin');
      const page = await newPage({ width: 640, height: 800 });
      await signIn(page, 'lee', APPROVER);
      await row(page, p.id).waitFor();
      const sideways = () => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth);
      await expect(sideways()).resolves.toBeLessThanOrEqual(0);
      await openProposal(page, p.id);
      await page.getByRole('button', { name: 'Approve with edits…' }).click();
      await page.getByRole('button', { name: 'Preview the edit' }).waitFor();
      await expect(sideways()).resolves.toBeLessThanOrEqual(0);
    });
  });
});
