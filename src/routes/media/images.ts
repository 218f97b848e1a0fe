import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { IMAGE_COMPLETED, IMAGE_QUALITIES, imageStreamEnd, type GeneratedImage, type ImageRequest, type MadeImages } from "../../canonical/media.ts";
import type { BillableUsage } from "../../billing/compute-cost.ts";
import type { StreamBilling } from "../../dispatch/media-dispatcher.ts";
import { madeImagesOf } from "../../translate/openai-media/made-images.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { fieldsOutside, parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ModelIdSchema, NonEmptyStringSchema } from "../../lib/schemas.ts";
import { IMAGE_SIZE } from "../../pricing/price.ts";
import { admitRequest } from "../admit-request.ts";
import { defaultModelFor } from "./default-model.ts";
import { priceImages, type ImagePricing, type ImageUnit } from "./image-pricing.ts";
import { mediaEventsResponse } from "./media-events-response.ts";
import { modelJsonResponse } from "../response-headers.ts";

/** OpenAI's longest prompt, that of its GPT image models (DALL-E 3 takes 4000, DALL-E 2 1000: the upstream says so). */
const MAX_PROMPT_CHARACTERS = 32_000;

const ImagesRequestSchema = v.object({
  model: v.optional(ModelIdSchema),
  prompt: v.pipe(NonEmptyStringSchema, v.maxLength(MAX_PROMPT_CHARACTERS, `must be at most ${MAX_PROMPT_CHARACTERS} characters`)),
  // null is absent, as OpenAI's SDK types these fields.
  n: v.nullish(v.pipe(v.number("must be an integer from 1 to 10"), v.integer("must be an integer from 1 to 10"), v.minValue(1, "must be at least 1"), v.maxValue(10, "must be at most 10")), 1),
  size: v.nullish(
    v.pipe(
      v.string("must be a string"),
      v.check((size) => size === "auto" || IMAGE_SIZE.test(size), "must be '<width>x<height>' with sides of 1 to 9999 pixels, e.g. '1024x1024', or 'auto'"),
    ),
  ),
  quality: v.nullish(v.picklist(IMAGE_QUALITIES, `must be one of ${IMAGE_QUALITIES.join(", ")}`)),
  style: v.nullish(v.picklist(["vivid", "natural"], "must be 'vivid' or 'natural'")),
  response_format: v.nullish(v.picklist(["url", "b64_json"], "must be 'url' or 'b64_json'")),
  // true: OpenAI's image_generation.* events, as GPT image models stream them.
  stream: v.nullish(v.boolean("must be true or false")),
  partial_images: v.nullish(v.pipe(v.number("must be an integer from 0 to 3"), v.integer("must be an integer from 0 to 3"), v.minValue(0, "must be at least 0"), v.maxValue(3, "must be at most 3"))),
});

/**
 * One image as the caller asked for it: a URL (a data: URL when the upstream sent bytes) or
 * base64. Asked for neither, bytes come as both: the spec's result has a `url`, and a model
 * that answers in bytes by default (OpenAI's GPT image models) is read from `b64_json` by
 * its callers. The spec's result always has a `revised_prompt`: an upstream that did not
 * revise the prompt (DALL-E 2, GPT image models) made the image from the caller's `prompt`.
 */
function imageView(image: GeneratedImage, format: "url" | "b64_json" | undefined, prompt: string) {
  const revised = { revised_prompt: image.revisedPrompt ?? prompt };
  if ("url" in image) return { url: image.url, ...revised };
  const dataUrl = { url: `data:${image.mimeType};base64,${image.base64}` };
  const bytes = { b64_json: image.base64 };
  if (format === "b64_json") return { ...bytes, ...revised };
  return format === "url" ? { ...dataUrl, ...revised } : { ...dataUrl, ...bytes, ...revised };
}

/**
 * A stream of images billed as its whole form is: for each image completed (its own event), at
 * most `n`, at the size and quality those events say the upstream made. An image not completed
 * when the stream ended (broken off, or its client gone, as a whole answer's client that left
 * before it came) is not charged.
 */
function completedImagesBilling(n: number, pricing: ImagePricing, usageOf: (count: number, unit: ImageUnit) => BillableUsage): StreamBilling {
  let completed = 0;
  let made: MadeImages | undefined;
  return {
    see({ body }) {
      if (body.type !== IMAGE_COMPLETED) return;
      completed++;
      made = madeImagesOf(body);
    },
    usage: () => (completed === 0 ? null : usageOf(Math.min(completed, n), pricing.chargedFor(made))),
  };
}

/** POST /v1/images/generations (spec 4.8), priced per image by size and quality, answered whole or as events. */
export function imagesRoutes(services: Services) {
  return new Hono<AppEnv>().post("/v1/images/generations", requireApiKey(services, "images"), async (c) => {
    const raw = await readJsonBody(c.req.raw, services.config.bodyTimeoutMs);
    const body = parseOrThrow(ImagesRequestSchema, raw);
    const model = body.model ?? defaultModelFor(services, c.get("principal"), "image");
    const pricing = priceImages(model, services.prices.get(model), body.size ?? undefined, body.quality ?? undefined);
    const usageOf = (count: number, unit: ImageUnit) => ({ inputTokens: 0, outputTokens: 0, images: { count, ...unit } });
    const stream = body.stream === true;
    const { meter, rateLimitHeaders } = await admitRequest(c, services, { model, mode: "image", stream, maxUsage: usageOf(body.n, pricing.held) });
    // What the caller left out stays undefined, which the upstream's JSON body leaves out.
    const request: ImageRequest = {
      model,
      prompt: body.prompt,
      n: body.n,
      size: body.size ?? undefined,
      quality: body.quality ?? undefined,
      style: body.style ?? undefined,
      responseFormat: body.response_format ?? undefined,
      partialImages: body.partial_images ?? undefined,
      extraFields: fieldsOutside(ImagesRequestSchema, raw),
    };
    if (stream) {
      const billing = completedImagesBilling(body.n, pricing, usageOf);
      const served = await services.media.streamEvents(model, "streamImages", meter, c.req.raw.signal, (adapter, call) => adapter.streamImages(request, call), billing);
      return mediaEventsResponse(served.value.events, imageStreamEnd(body.n), { rateLimitHeaders, served, requestId: c.get("requestId") });
    }
    const served = await services.media.call(
      model,
      "generateImages",
      meter,
      c.req.raw.signal,
      (adapter, call) => adapter.generateImages(request, call),
      // Billed for what came back, never more than was asked for, at what the upstream says it made.
      (result) => usageOf(Math.min(result.images.length, body.n), pricing.chargedFor(result.made)),
    );
    const data = served.value.images.slice(0, body.n).map((image) => imageView(image, body.response_format ?? undefined, body.prompt));
    const answer = { created: Math.floor(services.now() / 1000), data, ...served.value.answerFields };
    return modelJsonResponse(answer, { rateLimitHeaders, served, requestId: c.get("requestId") });
  });
}
