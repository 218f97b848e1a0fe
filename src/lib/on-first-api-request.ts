import { isAdminPath } from "../errors/error-body-for.ts";

type Fetch = (request: Request) => Response | Promise<Response>;

/** Paths that are not the API's traffic: the admin API and the health and readiness probes. */
function isUpkeep(pathname: string): boolean {
  return pathname === "/health" || pathname === "/ready" || isAdminPath(pathname);
}

/**
 * `fetch`, calling `onFirst` once, before the first request to the gateway's API (anything but
 * the admin API and the probes) is served. Until then each request's path is read; after it,
 * a request costs one check of a flag.
 */
export function onFirstApiRequest(fetch: Fetch, onFirst: () => void): Fetch {
  let seen = false;
  return (request) => {
    if (!seen && !isUpkeep(new URL(request.url).pathname)) {
      seen = true;
      onFirst();
    }
    return fetch(request);
  };
}
