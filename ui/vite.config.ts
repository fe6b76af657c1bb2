import { defineConfig } from 'vitest/config';

// Preact through esbuild's automatic JSX runtime: no Babel, no plugin.
// Routes are hash routes (#/plans/ID), so every page is `/` and asset URLs are
// absolute (`/assets/…`): the same build works served by the gateway at `/` (even
// for a deep link answered by the SPA fallback) and loaded by the desktop app.
export default defineConfig({
  base: '/',
  esbuild: { jsx: 'automatic', jsxImportSource: 'preact' },
  resolve: {
    alias: { react: 'preact/compat', 'react-dom': 'preact/compat' },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // No inline scripts or data: modules (the gateway's CSP forbids them).
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    reportCompressedSize: true,
  },
  server: {
    // `npm run dev` proxies the API to a running gateway (INTERLOCK_URL).
    // The gateway refuses foreign Origins, so the proxy drops the header.
    proxy: {
      '/api': {
        target: process.env.INTERLOCK_URL ?? 'http://127.0.0.1:8717',
        changeOrigin: true,
        configure: (proxy) => proxy.on('proxyReq', (req) => req.removeHeader('origin')),
      },
    },
  },
  test: {
    include: ['tests/unit/**/*.test.ts'],
    environment: 'node',
  },
});
