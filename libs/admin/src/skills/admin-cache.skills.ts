import { Inject, Injectable, OnModuleInit } from '@nestjs/common';
import { defineSkill, SkillError, SkillInvocation, SkillRegistry } from '@zmodu/skills';
import { ResolvedAdminCache } from './admin-cache';
import { ADMIN_SKILLS_OPTIONS } from './admin-skills.constants';
import {
  CACHE_CLEAR_NEEDS_ALL_MESSAGE,
  CACHE_CLEAR_SHARED_MESSAGE,
  CACHE_KEY_WILDCARD_MESSAGE,
  CACHE_NOT_ALLOWED_MESSAGE,
} from './admin-skills.messages';
import { ResolvedAdminSkillsOptions } from './admin-skills.options';

/** Keys one admin.cache.invalidate call names at most. */
export const MAX_INVALIDATE_KEYS = 100;
const MAX_KEY_CHARS = 512;
const WILDCARD = /[*?]/;

/** admin.cache.invalidate and admin.cache.clear (execute): allow-listed caches only, the caller's tenant's keys only. */
@Injectable()
export class AdminCacheSkills implements OnModuleInit {
  constructor(
    @Inject(ADMIN_SKILLS_OPTIONS) private readonly options: ResolvedAdminSkillsOptions,
    private readonly registry: SkillRegistry,
  ) {}

  onModuleInit(): void {
    const names = [...this.options.caches.keys()];
    const cache = {
      type: 'string',
      minLength: 1,
      maxLength: 64,
      description: `The cache's name: ${names.join(', ') || '(none)'}`,
    } as const;
    this.registry.register(
      defineSkill({
        name: 'admin.cache.invalidate',
        action: 'execute',
        source: 'AdminSkillsModule',
        requiredPermission: this.options.permissions.cache,
        description:
          "Invalidate (delete) named keys of an allow-listed cache, in the caller's tenant only. Name each key exactly: wildcards ('*', '?') are refused.",
        parameters: {
          type: 'object',
          properties: {
            cache,
            keys: {
              type: 'array',
              minItems: 1,
              maxItems: MAX_INVALIDATE_KEYS,
              uniqueItems: true,
              items: { type: 'string', minLength: 1, maxLength: MAX_KEY_CHARS },
            },
          },
          required: ['cache', 'keys'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.invalidate(args, ctx),
      }),
    );
    this.registry.register(
      defineSkill({
        name: 'admin.cache.clear',
        action: 'execute',
        source: 'AdminSkillsModule',
        requiredPermission: this.options.permissions.cache,
        description:
          "Drop every entry of an allow-listed cache (the caller's tenant's entries of a tenant cache). Needs all: true to mean it.",
        parameters: {
          type: 'object',
          properties: { cache, all: { type: 'boolean', description: 'Must be true: a full clear.' } },
          required: ['cache'],
          additionalProperties: false,
        } as const,
        handler: (args, ctx) => this.clear(args, ctx),
      }),
    );
  }

  async invalidate(args: { cache: string; keys: string[] }, ctx: SkillInvocation) {
    const cache = this.allowed(args.cache);
    const wildcard = args.keys.find((k) => WILDCARD.test(k));
    if (wildcard !== undefined) throw new SkillError('cache_key_wildcard', CACHE_KEY_WILDCARD_MESSAGE(wildcard));
    const tenantId = ctx.tenantId as string;
    const stored = args.keys.map((k) => cache.tenantKey(tenantId, k));
    if (cache.cache.mdel) await cache.cache.mdel(stored);
    else for (const key of stored) await cache.cache.del(key);
    return { cache: cache.name, scope: cache.scope, invalidated: args.keys.length, keys: args.keys };
  }

  async clear(args: { cache: string; all?: boolean }, ctx: SkillInvocation) {
    const cache = this.allowed(args.cache);
    if (args.all !== true) throw new SkillError('cache_clear_needs_all', CACHE_CLEAR_NEEDS_ALL_MESSAGE);
    if (cache.scope === 'global') await cache.cache.clear();
    else if (cache.clearTenant) await cache.clearTenant(ctx.tenantId as string, cache.cache);
    else throw new SkillError('cache_clear_shared', CACHE_CLEAR_SHARED_MESSAGE(cache.name));
    return { cache: cache.name, scope: cache.scope, cleared: true };
  }

  private allowed(name: string): ResolvedAdminCache {
    const cache = this.options.caches.get(name);
    if (!cache) throw new SkillError('cache_not_allowed', CACHE_NOT_ALLOWED_MESSAGE(name, [...this.options.caches.keys()]));
    return cache;
  }
}
