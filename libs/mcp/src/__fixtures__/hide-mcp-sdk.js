// node -r <this file>: the MCP SDK packages are not installed, as far as require can tell (an application that does
// not install the optional peer dependency). Their resolution fails as Node's own does (MODULE_NOT_FOUND).
const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (/^@modelcontextprotocol\/(server|client|sdk|core)(\/|$)/.test(request)) {
    const err = new Error(`Cannot find module '${request}'`);
    err.code = 'MODULE_NOT_FOUND';
    throw err;
  }
  return resolve.call(this, request, ...rest);
};
