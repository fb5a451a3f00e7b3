import { Inject } from '@nestjs/common';

/** Public token: the AdminConfigStore of AdminSkillsModule. Inject it with `@InjectAdminConfigStore()`. */
export const ADMIN_CONFIG_STORE = Symbol('zmodu:ADMIN_CONFIG_STORE');

/** Inject the admin config store (the `ADMIN_CONFIG_STORE` token). */
export const InjectAdminConfigStore = () => Inject(ADMIN_CONFIG_STORE);

/** Internal: AdminSkillsModule's options with their defaults, merged and checked once. */
export const ADMIN_SKILLS_OPTIONS = Symbol('zmodu:ADMIN_SKILLS_OPTIONS');
