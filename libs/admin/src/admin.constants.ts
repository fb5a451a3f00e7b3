/** Internal: AdminModule's options with their defaults, merged once (from the options given to forRoot/forRootAsync). */
export const ADMIN_OPTIONS = Symbol('zmodu:ADMIN_OPTIONS');
/** Internal: the request property where AdminPermissionGuard puts the caller it checked. */
export const ADMIN_CALLER = Symbol('zmodu:ADMIN_CALLER');
/** Internal: metadata key of @RequireAdminPermission. */
export const ADMIN_PERMISSION = Symbol('zmodu:ADMIN_PERMISSION');
