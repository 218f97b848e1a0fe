import type { ChannelType } from "../channels/channel.ts";
import type { ChatAdapter } from "./adapter.ts";
import { mockChatAdapter } from "./mock/mock-chat-adapter.ts";
import { openAiChatAdapter } from "./openai/openai-chat-adapter.ts";
import { anthropicChatAdapter } from "./anthropic/anthropic-chat-adapter.ts";
import { geminiChatAdapter } from "./gemini/gemini-chat-adapter.ts";

/** The chat adapter of each upstream kind; a kind without one cannot serve chat yet. */
export const CHAT_ADAPTERS: Partial<Record<ChannelType, ChatAdapter>> = {
  mock: mockChatAdapter,
  openai: openAiChatAdapter,
  anthropic: anthropicChatAdapter,
  gemini: geminiChatAdapter,
};
