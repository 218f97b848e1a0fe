import type { ChannelType } from "../channels/channel.ts";
import type { MediaAdapter } from "./adapter.ts";
import { geminiMediaAdapter } from "./gemini/gemini-media-adapter.ts";
import { mockMediaAdapter } from "./mock/mock-media-adapter.ts";
import { openAiMediaAdapter } from "./openai/openai-media-adapter.ts";

/** The non-chat endpoints of each upstream kind; Anthropic's API has none of them. */
export const MEDIA_ADAPTERS: Partial<Record<ChannelType, MediaAdapter>> = {
  mock: mockMediaAdapter,
  openai: openAiMediaAdapter,
  gemini: geminiMediaAdapter,
};
