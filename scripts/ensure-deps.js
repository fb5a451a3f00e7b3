// `npm test` on a fresh clone: install the locked dependencies first if they are missing.
const { existsSync } = require('node:fs');
const { join } = require('node:path');
const { execSync } = require('node:child_process');

const root = join(__dirname, '..');
if (!existsSync(join(root, 'node_modules', '.package-lock.json')) || !existsSync(join(root, 'node_modules', 'jest'))) {
  process.stdout.write('node_modules is missing: running npm ci first\n');
  execSync('npm ci --no-audit --no-fund', { cwd: root, stdio: 'inherit' });
}

// The approvals console (built by `npm run build`): build it when it is missing or older than its sources, so the
// sample's /admin/console and the browser tests serve what the sources say.
const { readdirSync, statSync } = require('node:fs');
const consoleDir = join(root, 'libs', 'admin', 'console');
const built = join(root, 'libs', 'admin', 'console-dist', 'index.html');
const newest = (path) => {
  const s = statSync(path);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newest(join(path, name))));
};
if (!existsSync(built) || newest(consoleDir) > statSync(built).mtimeMs) {
  process.stdout.write('the approvals console is not built or older than its sources: npm run build:console\n');
  execSync('npm run -s build:console', { cwd: root, stdio: 'inherit' });
}
