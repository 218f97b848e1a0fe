import * as v from "valibot";
import { Hono } from "hono";
import type { AppEnv } from "../../app-env.ts";
import type { Services } from "../../services.ts";
import { IMAGE_QUALITIES, type GeneratedImage, type ImageRequest } from "../../canonical/media.ts";
import { requireApiKey } from "../../auth/authenticate.ts";
import { badRequest } from "../../errors/gateway-error.ts";
import { fieldsOutside, parseOrThrow, readJsonBody } from "../../lib/validate.ts";
import { ModelIdSchema, NonEmptyStringSchema } from "../../lib/schemas.ts";
import { IMAGE_SIZE, type Price } from "../../pricing/price.ts";
import { admitRequest } from "../admit-request.ts";
import { defaultModelFor } from "./default-model.ts";
import { modelJsonResponse } from "../response-headers.ts";

/** Sizes a model without a size price table accepts: those of OpenAI's image models ("auto": the model picks). */
const DEFAULT_IMAGE_SIZES = ["256x256", "512x512", "1024x1024", "1792x1024", "1024x1792", "1536x1024", "1024x1536", "auto"];
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
  // Answered as one JSON body: a caller asking for events would read none from it.
  stream: v.nullish(v.literal(false, "streamed image generation is not served; leave out 'stream'")),
});

/** The quality an image is priced at when the caller named none: DALL-E's default. */
const DEFAULT_PRICED_QUALITY = "standard";

/** The sizes a model serves: those its price table names, else the default set. */
function sizesOf(price: Price | undefined): string[] {
  if (!price?.imagePrices) return DEFAULT_IMAGE_SIZES;
  return [...new Set(Object.keys(price.imagePrices).map((key) => key.split("/")[0]!))];
}

/** The quality of the dearest price a table lists for `size` (which it lists). */
function dearestQualityAt(table: Readonly<Record<string, number>>, size: string): string {
  const atSize = Object.entries(table).filter(([key]) => key.startsWith(`${size}/`));
  const [dearestKey] = atSize.reduce((dearest, entry) => (entry[1] > dearest[1] ? entry : dearest));
  return dearestKey.split("/")[1]!;
}

/**
 * The size and quality an image is made and priced at: the caller's, or the model's default;
 * refused with 400 when the model does not make it. `auto` leaves the quality to the model,
 * so it is priced at the dearest the table lists for the size, the most it can cost.
 */
function pricedImage(model: string, price: Price | undefined, askedSize: string | undefined, askedQuality: string | undefined) {
  const sizes = sizesOf(price);
  const size = askedSize ?? (sizes.includes("1024x1024") ? "1024x1024" : sizes[0]!);
  if (!sizes.includes(size)) throw badRequest(`Invalid 'size': the model '${model}' makes ${sizes.join(", ")}`);
  const table = price?.imagePrices;
  if (!table) return { size, quality: askedQuality ?? DEFAULT_PRICED_QUALITY };
  const quality = askedQuality === "auto" ? dearestQualityAt(table, size) : (askedQuality ?? DEFAULT_PRICED_QUALITY);
  if (table[`${size}/${quality}`] === undefined) {
    throw badRequest(`Invalid 'quality': the model '${model}' does not make '${quality}' images at ${size}`);
  }
  return { size, quality };
}

/**
 * One image as the caller asked for it: a URL (a data: URL when the upstream sent bytes) or
 * base64. Asked for neither, bytes come as both: the spec's result has a `url`, and a model
 * that answers in bytes by default (OpenAI's GPT image models) is read from `b64_json` by
 * its callers.
 */
function imageView(image: GeneratedImage, format: "url" | "b64_json" | undefined) {
  const revised = image.revisedPrompt === undefined ? {} : { revised_prompt: image.revisedPrompt };
  if ("url" in image) return { url: image.url, ...revised };
  const dataUrl = { url: `data:${image.mimeType};base64,${image.base64}` };
  const bytes = { b64_json: image.base64 };
  if (format === "b64_json") return { ...bytes, ...revised };
  return format === "url" ? { ...dataUrl, ...revised } : { ...dataUrl, ...bytes, ...revised };
}

/** POST /v1/images/generations (spec 4.8), priced per image by size and quality. */
export function imagesRoutes(services: Services) {
  return new Hono<AppEnv>().post("/v1/images/generations", requireApiKey(services, "images"), async (c) => {
    const raw = await readJsonBody(c.req.raw);
    const body = parseOrThrow(ImagesRequestSchema, raw);
    const model = body.model ?? defaultModelFor(services, c.get("principal"), "image");
    const { size, quality } = pricedImage(model, services.prices.get(model), body.size ?? undefined, body.quality ?? undefined);
    const usageOf = (count: number) => ({ inputTokens: 0, outputTokens: 0, images: { count, size, quality } });
    const { meter, rateLimitHeaders } = await admitRequest(c, services, { model, mode: "image", stream: false, maxUsage: usageOf(body.n) });
    // What the caller left out stays undefined, which the upstream's JSON body leaves out.
    const request: ImageRequest = {
      model,
      prompt: body.prompt,
      n: body.n,
      size,
      quality: body.quality ?? undefined,
      style: body.style ?? undefined,
      responseFormat: body.response_format ?? undefined,
      extraFields: fieldsOutside(ImagesRequestSchema, raw),
    };
    const served = await services.media.call(
      model,
      "generateImages",
      meter,
      c.req.raw.signal,
      (adapter, call) => adapter.generateImages(request, call),
      // Billed for what came back, never more than was asked for (and held).
      (result) => usageOf(Math.min(result.images.length, body.n)),
    );
    const data = served.value.images.slice(0, body.n).map((image) => imageView(image, body.response_format ?? undefined));
    const answer = { created: Math.floor(services.now() / 1000), data, ...served.value.answerFields };
    return modelJsonResponse(answer, { rateLimitHeaders, served, requestId: c.get("requestId") });
  });
}
