import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

// The approvals console: Preact, built to ../console-dist (served by AdminModule's ConsoleController at /admin/console).
// Relative asset URLs (base './'), so the same build works under any mount path; no CDN, nothing fetched at runtime.
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: './',
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: '../console-dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    sourcemap: false,
    target: 'es2022',
    reportCompressedSize: false,
  },
});
