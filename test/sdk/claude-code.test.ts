import { afterAll, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { CLAUDE_CODE_BETAS, MODELS, REMOTE_KINDS, flattenText, onlyRequest, startWorld, warningsOf, type RemoteKind, type World } from "./_support.ts";
import { jsonFixture } from "../helpers/loopback-upstream.ts";
import { editedAnthropicStream } from "../helpers/anthropic-upstream.ts";

/**
 * Claude Code pointed at the gateway (ANTHROPIC_BASE_URL): its requests, as the CLI sent them
 * (test/fixtures/claude-code-request.json, texts cut short), replayed against a channel of
 * each kind. Claude Code gives the agent list in a system message among the turns (Anthropic's
 * mid-conversation system messages, asked for by a beta flag), so the gateway must take one
 * wherever it goes; from a caller that did not ask for them, the contract's rule stands.
 */

let world: World;
beforeAll(async () => {
  world = await startWorld();
});
afterAll(() => world.close());
beforeEach(() => world.reset());

/** Claude Code's request (its first turn unless `body` is given) for a channel of `kind`, with its headers. */
function sendClaudeCodeRequest(kind: RemoteKind, body: Record<string, unknown> = jsonFixture("claude-code-request.json")): Promise<Response> {
  return world.gw.fetch("/v1/messages?beta=true", {
    method: "POST",
    headers: { "x-api-key": world.key, "anthropic-version": "2023-06-01", "anthropic-beta": CLAUDE_CODE_BETAS, "content-type": "application/json" },
    body: JSON.stringify({ ...body, model: MODELS[kind] }),
  });
}

/** The text of Claude Code's mid-conversation system message. */
const agentList = (): string => jsonFixture("claude-code-request.json").messages[1].content;

describe("Claude Code's request, with a system message among its turns", () => {
  for (const kind of REMOTE_KINDS) {
    test(`is served by a ${kind} channel`, async () => {
      const response = await sendClaudeCodeRequest(kind);
      const text = await response.text();
      expect({ status: response.status, text: response.ok ? "" : text }).toEqual({ status: 200, text: "" });
      expect(response.headers.get("content-type")).toContain("text/event-stream");
    });
  }

  test("reaches an anthropic upstream in its place, with the beta flag that asks for it", async () => {
    await (await sendClaudeCodeRequest("anthropic")).text();
    const { body, headers } = onlyRequest(world, "anthropic");
    expect(body.messages.map((m: { role: string }) => m.role)).toEqual(["user", "system"]);
    expect(body.messages[1].content).toBe(agentList());
    expect(headers["anthropic-beta"]).toContain("mid-conversation-system-2026-04-07");
  });

  test("reaches an openai upstream in its place, after the user's turn", async () => {
    await (await sendClaudeCodeRequest("openai")).text();
    const messages = onlyRequest(world, "openai").body.messages as { role: string; content: unknown }[];
    expect(messages.map((m) => m.role)).toEqual(["system", "user", "system"]);
    expect(messages[2]!.content).toBe(agentList());
  });

  test("reaches a gemini upstream in its one system instruction, the turns left the user's", async () => {
    await (await sendClaudeCodeRequest("gemini")).text();
    const body = onlyRequest(world, "gemini").body;
    expect(flattenText(body.systemInstruction)).toContain(agentList());
    expect(body.contents.map((c: { role: string }) => c.role)).toEqual(["user"]);
  });

  test("to an anthropic upstream, is not said to be moved: it went where Claude Code put it", async () => {
    const response = await sendClaudeCodeRequest("anthropic");
    await response.text();
    expect(warningsOf(response)).not.toContain("system message");
    expect(onlyRequest(world, "anthropic").body.messages[1].role).toBe("system");
  });

  test("to a gemini upstream, is said to be moved to the top, named where Claude Code put it (not counting its system prompt)", async () => {
    const response = await sendClaudeCodeRequest("gemini");
    await response.text();
    expect(warningsOf(response)).toContain("messages[1]: a system message after the conversation began, moved to the top");
  });

  test("a system message with a block of another type than text is refused with the spec's error shape", async () => {
    const body = jsonFixture("claude-code-request.json");
    body.messages[1] = { role: "system", content: [{ type: "image", source: { type: "url", url: "https://example.com/a.png" } }] };
    const response = await world.gw.fetch("/v1/messages", {
      method: "POST",
      headers: { "x-api-key": world.key, "anthropic-version": "2023-06-01", "content-type": "application/json" },
      body: JSON.stringify({ ...body, model: MODELS.anthropic }),
    });
    expect(response.status).toBe(400);
    const error = (await response.json()).error;
    expect(error.type).toBe("invalid_request_error");
    expect(error.message).toContain("messages[1].content");
  });
});

describe("a system message among the turns, from a caller that did not ask for the feature", () => {
  /** Claude Code's request sent to `path` as another client would: without Anthropic's beta flags. */
  async function sendWithoutBeta(path: string, beta?: string): Promise<Response> {
    const headers: Record<string, string> = { "x-api-key": world.key, "anthropic-version": "2023-06-01", "content-type": "application/json" };
    if (beta !== undefined) headers["anthropic-beta"] = beta;
    const body = { ...jsonFixture("claude-code-request.json"), model: MODELS.anthropic };
    return world.gw.fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  }

  for (const path of ["/v1/messages", "/v1/messages/count_tokens"]) {
    test(`is refused at ${path} as the contract says (user and assistant turns only), before any upstream call`, async () => {
      for (const beta of [undefined, "claude-code-20250219,interleaved-thinking-2025-05-14"]) {
        const response = await sendWithoutBeta(path, beta);
        expect(response.status).toBe(400);
        const { error } = await response.json();
        expect(error.type).toBe("invalid_request_error");
        expect(error.message).toBe("Invalid 'messages[1].role': must be 'user' or 'assistant' ('system' too, with the anthropic-beta flag mid-conversation-system-2026-04-07)");
      }
      expect(world.upstreams.anthropic.requests).toHaveLength(0);
    });
  }

  test("is taken under a later flag of the same feature", async () => {
    const response = await sendWithoutBeta("/v1/messages", "effort-2025-11-24, mid-conversation-system-2027-01-01");
    await response.text();
    expect(response.status).toBe(200);
  });
});

describe("Claude Code's next turn, answering a tool call made without thinking", () => {
  /** The CLI's request after it ran the Bash call of an answer that did not think (its blocks as the CLI sent them). */
  function toolResultTurn(): Record<string, any> {
    const body = jsonFixture("claude-code-request.json");
    const call = { type: "tool_use", id: "toolu_01ABC", name: "Bash", input: { command: "echo hello", description: "Print hello" } };
    const result = { tool_use_id: "toolu_01ABC", type: "tool_result", content: "hello", is_error: false, cache_control: { type: "ephemeral" } };
    body.messages.push({ role: "assistant", content: [call] }, { role: "user", content: [result] });
    return body;
  }

  test("goes to an anthropic channel with its own thinking, and no warning says otherwise", async () => {
    // An Anthropic-compatible server that takes such a turn while thinking (Anthropic's own decides for itself).
    world.upstreams.anthropic.setBehavior({ script: () => editedAnthropicStream(() => {}) });
    const response = await sendClaudeCodeRequest("anthropic", toolResultTurn());
    await response.text();
    expect(response.status).toBe(200);
    expect(onlyRequest(world, "anthropic").body.thinking).toEqual({ type: "adaptive" });
    expect(warningsOf(response)).not.toContain("reasoning");
  });
});
