export const INVALID_ADMIN_SKILLS_OPTIONS_MESSAGE = (field: string, problem: string) =>
  `Invalid AdminSkillsModule options: ${field}: ${problem}.`;

export const CONFIG_VERSION_CONFLICT_MESSAGE = (key: string, expected: number, current: number) =>
  `Config key '${key}' is at version ${current}, not ${expected}: somebody changed it since it was read. Nothing was written; read it again and decide on the current value.`;

export const INVALID_CONFIG_WRITE_MESSAGE = (problem: string) => `Invalid config store call: ${problem}.`;

export const CONFIG_KEY_UNDECLARED_MESSAGE = (key: string) =>
  `Config key ${JSON.stringify(key)} is not declared: only the keys of AdminSkillsModule's config.keys exist (admin.config.get without a key, or GET /admin/config, lists them).`;

export const CONFIG_KEY_IMMUTABLE_MESSAGE = (key: string) =>
  `Config key '${key}' is read-only (declared without mutable: true): it cannot be changed through admin.config.set.`;

export const CONFIG_STORE_UNAVAILABLE_MESSAGE =
  'The config store cannot be reached (the database is unavailable): nothing was read or written; try again shortly.';

export const INVALID_CONFIG_VALUE_MESSAGE = (key: string, problems: string) => `The value does not fit config key '${key}': ${problems}.`;

export const CACHE_NOT_ALLOWED_MESSAGE = (name: string, allowed: readonly string[]) =>
  `Cache ${JSON.stringify(name)} is not on the admin allow list${allowed.length ? `: name one of ${allowed.join(', ')}` : ' (no cache is: give AdminSkillsModule.forRoot({ caches }))'}.`;

export const CACHE_KEY_WILDCARD_MESSAGE = (key: string) =>
  `Cache key ${JSON.stringify(key)} contains a wildcard ('*' or '?'): name each key exactly (use admin.cache.clear with all: true to drop every entry).`;

export const CACHE_CLEAR_NEEDS_ALL_MESSAGE = 'A full cache clear drops every entry: send all: true to mean it.';

export const CACHE_CLEAR_SHARED_MESSAGE = (name: string) =>
  `Cache '${name}' holds the entries of every tenant: a full clear would drop other tenants' entries too, so it is refused. Invalidate keys by name, or declare the cache with clearTenant (or scope: 'global' when it holds no tenant data).`;

export const CALLBACK_MISSING_MESSAGE = (skill: string, option: string) =>
  `${skill} is not available in this application: it registered no ${option} callback (the framework does no user or tenant logic of its own).`;
