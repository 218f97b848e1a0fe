import { GatewayError } from "../errors/gateway-error.ts";
import { parseMultipartStream, type MultipartLimits } from "../multipart/parse-multipart.ts";
import type { CreateTempUpload, TempUpload } from "./temp-upload.ts";

/** The uploaded file, spooled to disk, with what the client said about it. */
export type UploadedFile = TempUpload & { filename: string; contentType: string };

/** A received form: its text fields and its one file. */
export interface ReceivedUpload {
  /** Text fields by name; a repeated name keeps its last value. */
  fields: Record<string, string>;
  /** Every text field in body order, repeats included (e.g. `timestamp_granularities[]`). */
  entries: [string, string][];
  /** The part named `file`, or null when the form had none. The caller must `remove()` it. */
  file: UploadedFile | null;
}

/** Limits of one upload. */
export type UploadLimits = MultipartLimits;

/** The limits of OpenAI's audio endpoints: a 25 MB file and a few small fields. */
export const DEFAULT_UPLOAD_LIMITS: UploadLimits = { maxFileBytes: 25 * 1024 * 1024, maxFieldBytes: 64 * 1024, maxParts: 64 };

/** The one file part the audio endpoints accept. */
const FILE_FIELD = "file";

/**
 * Reads a multipart/form-data request, spooling the part named `file` to a temp file as it
 * arrives. Whatever goes wrong (a 400, a 413, the client hanging up mid-upload) the temp
 * file is removed before the error is rethrown.
 */
export async function receiveMultipartUpload(
  body: ReadableStream<Uint8Array> | null,
  contentType: string,
  createTempUpload: CreateTempUpload,
  limits: UploadLimits = DEFAULT_UPLOAD_LIMITS,
): Promise<ReceivedUpload> {
  if (body === null) throw new GatewayError(400, "The request has no body; expected multipart/form-data");
  const entries: [string, string][] = [];
  // Typed by assertion so the catch block does not narrow it to null: onFile assigns it.
  let file = null as UploadedFile | null;
  try {
    await parseMultipartStream(
      body,
      contentType,
      {
        onField(name, value) {
          entries.push([name, value]);
        },
        async onFile(part) {
          if (part.name !== FILE_FIELD) {
            throw new GatewayError(400, `Unexpected file in field "${part.name}"; the file goes in "${FILE_FIELD}"`);
          }
          if (file !== null) throw new GatewayError(400, `Only one file may be sent in "${FILE_FIELD}"`);
          const upload = await createTempUpload();
          file = Object.assign(upload, { filename: part.filename, contentType: part.contentType });
          return upload.writable;
        },
      },
      limits,
    );
  } catch (error) {
    // Cleanup must not replace the error that explains the failure.
    await file?.remove().catch(() => {});
    throw error;
  }
  // fromEntries defines own properties, so a field named __proto__ is just a field.
  return { fields: Object.fromEntries(entries), entries, file };
}
