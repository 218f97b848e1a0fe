import type { Principal } from "./auth/key-cache.ts";

/** Hono context variables, typed once for every route and middleware. */
export interface AppEnv {
  Variables: {
    requestId: string;
    /** Set by the auth middleware. */
    principal: Principal;
  };
}
