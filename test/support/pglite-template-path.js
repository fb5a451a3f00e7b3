const { join } = require('node:path');
const { tmpdir } = require('node:os');
const { readFileSync } = require('node:fs');

/** Where the prepared PGlite data dir lives, keyed by the installed PGlite version. */
function templatePath() {
  const pkg = join(__dirname, '..', '..', 'node_modules', '@electric-sql', 'pglite', 'package.json');
  const { version } = JSON.parse(readFileSync(pkg, 'utf8'));
  return join(tmpdir(), `zmodu-pglite-template-${version}.tar.gz`);
}

module.exports = { templatePath };
