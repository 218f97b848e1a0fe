import * as v from "valibot";

/** What an API key may be used for; each model endpoint needs one of these. */
export const PERMISSIONS = ["chat", "embeddings", "rerank", "images", "audio"] as const;
export type Permission = (typeof PERMISSIONS)[number];

export const PermissionSchema = v.picklist(PERMISSIONS, `must be one of ${PERMISSIONS.join(", ")}`);
