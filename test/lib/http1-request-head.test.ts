import { describe, expect, test } from "bun:test";
import { requestHead, type RequestHeadParts } from "../../src/lib/http1/request-head.ts";

/** The head of a request to 127.0.0.1:8080 with `headers`, and the given parts overriding the rest. */
function headWith(headers: [string, string][], parts: Partial<RequestHeadParts> = {}): string {
  return requestHead({ method: "POST", target: "/v1/chat?x=1", host: "127.0.0.1:8080", headers, bodyLength: 12, userAgent: "Test/1", ...parts });
}

describe("requestHead", () => {
  test("the request line, the client's fields, the caller's fields in order, defaults, the body's length, then the blank line", () => {
    expect(headWith([["Authorization", "Bearer k"], ["X-Two", " spaced \t"]])).toBe(
      "POST /v1/chat?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nconnection: keep-alive\r\naccept-encoding: identity\r\n" +
        "Authorization: Bearer k\r\nX-Two: spaced\r\naccept: */*\r\nuser-agent: Test/1\r\ncontent-length: 12\r\n\r\n",
    );
  });

  test("the caller's host, content-length, connection, transfer-encoding, keep-alive and accept-encoding give way to the client's", () => {
    const head = headWith(
      [["Host", "evil.example"], ["Content-Length", "999"], ["Connection", "close"], ["Transfer-Encoding", "chunked"], ["Keep-Alive", "timeout=1"], ["Accept-Encoding", "gzip"]],
      { bodyLength: 3 },
    );
    expect(head).toBe("POST /v1/chat?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nconnection: keep-alive\r\naccept-encoding: identity\r\naccept: */*\r\nuser-agent: Test/1\r\ncontent-length: 3\r\n\r\n");
  });

  test("a caller's accept and user-agent, in any case, replace the defaults", () => {
    const head = headWith([["ACCEPT", "application/json"], ["User-Agent", "Mine/2"]]);
    expect(head).toContain("\r\nACCEPT: application/json\r\nUser-Agent: Mine/2\r\n");
    expect(head).not.toContain("*/*");
    expect(head).not.toContain("Test/1");
  });

  test("a request without a body has no content-length", () => {
    expect(headWith([], { method: "GET", bodyLength: null })).toBe(
      "GET /v1/chat?x=1 HTTP/1.1\r\nhost: 127.0.0.1:8080\r\nconnection: keep-alive\r\naccept-encoding: identity\r\naccept: */*\r\nuser-agent: Test/1\r\n\r\n",
    );
    expect(headWith([], { bodyLength: 0 })).toContain("\r\ncontent-length: 0\r\n");
  });

  test.each([
    ["a CR", "key\rx"],
    ["an LF", "key\r\nX-Injected: 1"],
    ["a NUL", "key\0"],
    ["a non-ASCII letter", "kéy"],
    ["a control character", "key\x7f"],
  ])("a value with %s throws a TypeError", (_, value) => {
    expect(() => headWith([["Authorization", value]])).toThrow(TypeError);
  });

  test.each(["", "X Space", "X:Colon", "Ünicode", "X\r\nY"])("the field name %p throws a TypeError", (name) => {
    expect(() => headWith([[name, "v"]])).toThrow(TypeError);
  });

  test.each(["", "PO ST", "GET /x HTTP/1.1\r\nX-Injected: 1\r\n\r\nGET", "PÖST"])("the method %p, not a token, throws a TypeError", (method) => {
    expect(() => headWith([], { method })).toThrow(TypeError);
  });
});
