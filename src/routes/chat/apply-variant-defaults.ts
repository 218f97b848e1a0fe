import type { ChatRequest, SamplingParams } from "../../canonical/chat.ts";
import type { Variant } from "../../config.ts";

/**
 * Fills the defaults spec 4.1 gives for parameters the caller left out: Variant A sends
 * temperature 0.7, max_tokens 4096 and top_p 1.0; Variant B sends temperature 1.0 only.
 */
export function applyVariantDefaults(request: ChatRequest, variant: Variant): ChatRequest {
  const params = { ...request.params };
  const defaulted: (keyof SamplingParams)[] = [];
  const fill = (name: "temperature" | "maxTokens" | "topP", value: number) => {
    if (params[name] !== undefined) return;
    params[name] = value;
    defaulted.push(name);
  };
  if (variant === "A") {
    fill("temperature", 0.7);
    fill("maxTokens", 4096);
    fill("topP", 1.0);
  } else {
    fill("temperature", 1.0);
  }
  return { ...request, params, defaulted };
}
