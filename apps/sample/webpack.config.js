// Nest's webpack defaults leave every package in node_modules out of the bundle; the libraries are
// npm workspaces (node_modules/@zmodu/* link to libs/*), so keep those in: the sample is built from
// their sources through the tsconfig path aliases, as before, not from their compiled packages.
const nodeExternals = require('webpack-node-externals');

module.exports = (options) => ({
  ...options,
  externals: [nodeExternals({ allowlist: [/^@zmodu\//] })],
});
