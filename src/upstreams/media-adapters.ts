import type { ChannelType } from "../channels/channel.ts";
import type { MediaAdapter } from "./adapter.ts";
import { geminiMediaAdapter } from "./gemini/gemini-media-adapter.ts";
import { mockMediaAdapter } from "./mock/mock-media-adapter.ts";
import { openAiMediaAdapter } from "./openai/openai-media-adapter.ts";

/**
 * The non-chat endpoints of each upstream kind; Anthropic's API has none of them, Gemini's only
 * embeddings. Both kinds that serve speech, transcription and images stream them as OpenAI's
 * events too, so no kind's whole answer has to be made into a stream, and a stream is served by
 * the same channels as its whole form. (A kind whose API could not stream would leave the
 * method out, and its channels would not be tried for a stream.)
 */
export const MEDIA_ADAPTERS: Partial<Record<ChannelType, MediaAdapter>> = {
  mock: mockMediaAdapter,
  openai: openAiMediaAdapter,
  gemini: geminiMediaAdapter,
};
