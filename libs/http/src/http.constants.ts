/** The resolved ZmoduHttpModule options (what the guard, the filter and the runs controller inject). */
export const ZMODU_HTTP_OPTIONS = Symbol('zmodu.http.options');
/** Metadata key of @RequireCaller's permissions. */
export const CALLER_PERMISSIONS = 'zmodu:http:caller-permissions';
/** Metadata key of the options naming a permission a route requires (the runs controller's `runPermission`). */
export const CALLER_OPTION_PERMISSIONS = 'zmodu:http:caller-option-permissions';
/** Where HttpCallerGuard puts the checked caller context on the request (read by @CallerContext()). */
export const CALLER_CONTEXT = Symbol('zmodu.http.caller-context');
