/** Internal: AdminModule's options with their defaults, merged once (from the options given to forRoot/forRootAsync). */
export const ADMIN_OPTIONS = Symbol('zmodu:ADMIN_OPTIONS');
/** Internal: the request property where AdminPermissionGuard puts the caller it checked. */
export const ADMIN_CALLER = Symbol('zmodu:ADMIN_CALLER');
/** Internal: metadata key of @RequireAdminPermission. */
export const ADMIN_PERMISSION = Symbol('zmodu:ADMIN_PERMISSION');
/** Internal: the extras AdminModule was given (which endpoints it serves), for the console's settings. */
export const ADMIN_EXTRAS = Symbol('zmodu:ADMIN_EXTRAS');
/**
 * Metadata on the admin routes that need no caller: the console's own files and settings (GET /admin/console,
 * /admin/console/assets/*, /admin/console/config.json). A global auth guard of the application lets them through with
 * `reflector.get(ADMIN_PUBLIC_ROUTE, context.getHandler())`.
 */
export const ADMIN_PUBLIC_ROUTE = 'zmodu:admin-public-route';
