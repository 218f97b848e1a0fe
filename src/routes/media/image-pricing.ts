import type { ImageQuality, MadeImages } from "../../canonical/media.ts";
import { badRequest } from "../../errors/gateway-error.ts";
import { imagePriceKey, type Price } from "../../pricing/price.ts";

/** Sizes a model without a size price table accepts: those of OpenAI's image models ("auto": the model picks). */
const DEFAULT_IMAGE_SIZES = ["256x256", "512x512", "1024x1024", "1792x1024", "1024x1792", "1536x1024", "1024x1536", "auto"];

/** The quality an image is charged at when the caller named none and the answer says none: DALL-E's default. */
const DEFAULT_PRICED_QUALITY = "standard";

/** The size an image is charged at when the caller named none and the answer says none: OpenAI's DALL-E default. */
const DEFAULT_PRICED_SIZE = "1024x1024";

/** A size and quality one image is priced at (a key of the model's table, or anything under a flat price). */
export interface ImageUnit {
  size: string;
  quality: string;
}

/** What an image request is held at, and what its answer is charged at. */
export interface ImagePricing {
  /** The dearest unit the model could make for the request: what the hold covers. */
  held: ImageUnit;
  /** The unit charged: the size and quality the answer says it made, else the model's defaults. */
  chargedFor(made: MadeImages | undefined): ImageUnit;
}

/** The sizes a model serves: those its price table names, else the default set. */
function sizesOf(price: Price | undefined): string[] {
  if (!price?.imagePrices) return DEFAULT_IMAGE_SIZES;
  return [...new Set(Object.keys(price.imagePrices).map((key) => key.split("/")[0]!))];
}

/** The dearest of a table's entries whose size and quality pass the filters, as a unit. */
function dearestUnit(table: Readonly<Record<string, number>>, sizeFits: (size: string) => boolean, qualityFits: (quality: string) => boolean) {
  let dearest: { unit: ImageUnit; micros: number } | undefined;
  for (const [key, micros] of Object.entries(table)) {
    const [size, quality] = key.split("/") as [string, string];
    if (sizeFits(size) && qualityFits(quality) && (dearest === undefined || micros > dearest.micros)) dearest = { unit: { size, quality }, micros };
  }
  return dearest?.unit;
}

/**
 * How an image request is priced; refused with 400 when the model does not make what was
 * asked for. A size or quality the caller left to the model (left out, or `auto`: GPT image
 * models' default is `auto` for both) is held at the dearest the table lists, the most the
 * answer can cost, and charged at what the answer says it made (GPT image models report
 * `size` and `quality`). An answer that says nothing is charged at DALL-E's defaults
 * (1024x1024, standard; the dearest the table lists where those are not priced) and, for
 * `auto` quality, at the dearest quality of the size.
 */
export function priceImages(model: string, price: Price | undefined, askedSize: string | undefined, askedQuality: ImageQuality | undefined): ImagePricing {
  const sizes = sizesOf(price);
  const size = askedSize === "auto" ? undefined : askedSize;
  const quality = askedQuality === "auto" ? undefined : askedQuality;
  if (size !== undefined && !sizes.includes(size)) throw badRequest(`Invalid 'size': the model '${model}' makes ${sizes.join(", ")}`);
  const table = price?.imagePrices;
  if (!table) {
    // A flat price: what is made does not change the charge.
    const unit = { size: askedSize ?? DEFAULT_PRICED_SIZE, quality: askedQuality ?? DEFAULT_PRICED_QUALITY };
    return { held: unit, chargedFor: () => unit };
  }
  const sizeFits = (candidate: string) => size === undefined || candidate === size;
  const qualityFits = (candidate: string) => quality === undefined || candidate === quality;
  const held = dearestUnit(table, sizeFits, qualityFits);
  if (!held) throw badRequest(`Invalid 'quality': the model '${model}' does not make '${quality}' images${size === undefined ? "" : ` at ${size}`}`);
  const priced = (unit: ImageUnit) => table[imagePriceKey(unit.size, unit.quality)] !== undefined;
  return {
    held,
    chargedFor(made) {
      const madeSize = size ?? (made?.size !== undefined && sizeFits(made.size) ? made.size : DEFAULT_PRICED_SIZE);
      const defaultQuality = askedQuality === "auto" ? dearestUnit(table, (s) => s === madeSize, () => true)?.quality : DEFAULT_PRICED_QUALITY;
      const madeQuality = quality ?? (made?.quality !== undefined && qualityFits(made.quality) ? made.quality : defaultQuality);
      const unit = { size: madeSize, quality: madeQuality ?? DEFAULT_PRICED_QUALITY };
      // What the table does not price (a size or quality of its own the upstream made) is charged as held.
      return priced(unit) ? unit : held;
    },
  };
}
