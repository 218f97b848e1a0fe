import type { ChatRequest } from "../../canonical/chat.ts";
import type { Variant } from "../../config.ts";

/**
 * Fills the defaults spec 4.1 gives for parameters the caller left out: Variant A sends
 * temperature 0.7, max_tokens 4096 and top_p 1.0; Variant B sends temperature 1.0 only.
 */
export function applyVariantDefaults(request: ChatRequest, variant: Variant): ChatRequest {
  const params = { ...request.params };
  if (variant === "A") {
    params.temperature ??= 0.7;
    params.maxTokens ??= 4096;
    params.topP ??= 1.0;
  } else {
    params.temperature ??= 1.0;
  }
  return { ...request, params };
}
