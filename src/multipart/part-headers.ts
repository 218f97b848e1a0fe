import { GatewayError } from "../errors/gateway-error.ts";

/** What a part's headers say about it (RFC 7578 section 4.2 and 4.4). */
export interface PartHeaders {
  name: string;
  /** Present exactly when the part is a file, possibly empty (a form sent with no file chosen). */
  filename?: string;
  contentType?: string;
}

// RFC 2046 section 5.1.1: bchars, 1 to 70 of them, the last not a space.
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/** The boundary of a `multipart/form-data` Content-Type, quoted or not; anything else is a 400. */
export function parseBoundary(contentType: string): string {
  const { value, params } = parseParameterized(contentType);
  if (value !== "multipart/form-data") {
    throw new GatewayError(400, "Content-Type must be multipart/form-data");
  }
  const boundary = params.get("boundary");
  if (boundary === undefined || !BOUNDARY.test(boundary)) {
    throw new GatewayError(400, "Content-Type multipart/form-data needs a valid boundary parameter");
  }
  return boundary;
}

/** Reads one part's header block (lines without their final blank line); a part with no form-data name is a 400. */
export function parsePartHeaders(block: string): PartHeaders {
  let disposition: string | undefined;
  let contentType: string | undefined;
  for (const line of block.split(/\r?\n/)) {
    const colon = line.indexOf(":");
    if (colon === -1) continue;
    const header = line.slice(0, colon).trim().toLowerCase();
    if (header === "content-disposition") disposition = line.slice(colon + 1);
    else if (header === "content-type") contentType = line.slice(colon + 1).trim() || undefined;
  }
  const { value, params } = parseParameterized(disposition ?? "");
  const name = params.get("name");
  if (value !== "form-data" || name === undefined) {
    throw new GatewayError(400, "Each multipart part needs a Content-Disposition of form-data with a name");
  }
  const plainFilename = params.get("filename");
  const extendedFilename = params.get("filename*");
  // Either parameter makes the part a file; a filename* that does not decode is still one
  // (taken for a text field, a file ran into the field limit with a 413), named as sent.
  const filename =
    decodeExtendedValue(extendedFilename) ?? (plainFilename === undefined ? extendedFilename : unescapeFormName(plainFilename));
  return { name: unescapeFormName(name), filename, contentType };
}

/**
 * Splits `type; key=value; key="quoted; value"` into its lower-cased value and parameters
 * (keys lower-cased, the first of a repeated key kept). Inside quotes only `\"` and `\\` are
 * escapes: browsers send Windows paths with bare backslashes and escape quotes as %22.
 */
function parseParameterized(header: string): { value: string; params: Map<string, string> } {
  const params = new Map<string, string>();
  let i = header.indexOf(";");
  if (i === -1) i = header.length;
  const value = header.slice(0, i).trim().toLowerCase();
  while (i < header.length) {
    i++; // past ";"
    const eq = header.indexOf("=", i);
    const semi = header.indexOf(";", i);
    if (eq === -1) break;
    if (semi !== -1 && semi < eq) {
      i = semi; // a bare token with no value
      continue;
    }
    const key = header.slice(i, eq).trim().toLowerCase();
    i = eq + 1;
    while (header[i] === " " || header[i] === "\t") i++;
    let param = "";
    if (header[i] === '"') {
      for (i++; i < header.length && header[i] !== '"'; i++) {
        const next = header[i + 1];
        if (header[i] === "\\" && (next === '"' || next === "\\")) i++;
        param += header[i];
      }
      const end = header.indexOf(";", i);
      i = end === -1 ? header.length : end;
    } else {
      const end = header.indexOf(";", i);
      i = end === -1 ? header.length : end;
      param = header.slice(eq + 1, i).trim();
    }
    if (!params.has(key)) params.set(key, param);
  }
  return { value, params };
}

/** Undoes the HTML form encoding of names and filenames: `%0A`, `%0D` and `%22` back to LF, CR and `"`. */
function unescapeFormName(name: string): string {
  return name.replace(/%0A/gi, "\n").replace(/%0D/gi, "\r").replace(/%22/g, '"');
}

/** An RFC 8187 `UTF-8''percent%20encoded` value, or undefined if absent, of another charset or malformed. */
function decodeExtendedValue(value: string | undefined): string | undefined {
  const match = value === undefined ? null : /^utf-8'[^']*'(.*)$/i.exec(value);
  if (!match) return undefined;
  try {
    return decodeURIComponent(match[1]!);
  } catch {
    return undefined;
  }
}
