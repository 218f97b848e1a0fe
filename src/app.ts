import { Hono } from "hono";
import type { AppEnv } from "./app-env.ts";
import type { Services } from "./services.ts";
import { errorBodyFor } from "./errors/error-body-for.ts";
import { renderError } from "./errors/render-error.ts";
import { requestId } from "./middleware/request-id.ts";
import { bodyLimit } from "./middleware/body-limit.ts";
import { accessLog } from "./middleware/access-log.ts";
import { cors } from "./middleware/cors.ts";
import { healthRoutes } from "./routes/health.ts";
import { modelRoutes } from "./routes/models.ts";
import { balanceRoutes } from "./routes/balance.ts";
import { chatCompletionsRoutes } from "./routes/chat/chat-completions.ts";
import { messagesRoutes } from "./routes/chat/messages.ts";
import { generateContentRoutes } from "./routes/chat/generate-content.ts";
import { responsesRoutes } from "./routes/chat/responses.ts";
import { keptResponsesRoutes } from "./routes/chat/kept-responses.ts";
import { adminRoutes } from "./routes/admin/index.ts";
import { embeddingsRoutes } from "./routes/media/embeddings.ts";
import { rerankRoutes } from "./routes/media/rerank.ts";
import { imagesRoutes } from "./routes/media/images.ts";
import { speechRoutes } from "./routes/media/speech.ts";
import { TRANSCRIPTION_PATHS, transcriptionRoutes } from "./routes/media/transcriptions.ts";

/** The runtime-neutral HTTP app: every route, middleware and the one error renderer. */
export function createApp(services: Services): Hono<AppEnv> {
  const app = new Hono<AppEnv>();
  // Outermost, so its duration and status include every other step; left out entirely when
  // off, so a request pays nothing for it.
  if (services.config.logRequests) app.use("*", accessLog(services.log, services.now));
  // Before the key is asked for: a browser's preflight carries none. Left out when no origin is allowed.
  if (services.config.corsOrigins !== "none") app.use("*", cors(services.config.corsOrigins));
  app.use("*", requestId());
  app.use("*", bodyLimit(services.config.maxBodyBytes, services.config.bodyTimeoutMs, TRANSCRIPTION_PATHS));
  app.route("/", healthRoutes(services));
  app.route("/", modelRoutes(services));
  if (services.config.variant === "A") app.route("/", balanceRoutes(services));
  app.route("/", chatCompletionsRoutes(services));
  app.route("/", messagesRoutes(services));
  app.route("/", generateContentRoutes(services));
  app.route("/", responsesRoutes(services));
  app.route("/", keptResponsesRoutes(services));
  app.route("/", embeddingsRoutes(services));
  app.route("/", rerankRoutes(services));
  app.route("/", imagesRoutes(services));
  app.route("/", speechRoutes(services));
  app.route("/", transcriptionRoutes(services));
  app.route("/v1/admin", adminRoutes(services));
  app.notFound((c) => c.json(errorBodyFor(c.req.path, 404, `Unknown endpoint: ${c.req.method} ${c.req.path}`), 404));
  app.onError((error, c) => renderError(error, c, services.log));
  return app;
}
