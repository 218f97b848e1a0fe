import { expect, test } from "bun:test";
import { Deadline } from "../../src/dispatch/deadline.ts";

test("aborts with a TimeoutError when the time passes", async () => {
  const deadline = new Deadline(new AbortController().signal, 20);
  expect(deadline.signal.aborted).toBe(false);
  await Bun.sleep(60);
  expect(deadline.signal.aborted).toBe(true);
  expect((deadline.signal.reason as DOMException).name).toBe("TimeoutError");
});

test("aborts with the client's reason when the client goes away, and at once if it already has", () => {
  const client = new AbortController();
  const deadline = new Deadline(client.signal, 60_000);
  client.abort("client left");
  expect(deadline.signal.aborted).toBe(true);
  expect(deadline.signal.reason).toBe("client left");
  deadline.clear();

  const gone = new AbortController();
  gone.abort("gone before");
  const late = new Deadline(gone.signal, 60_000);
  expect(late.signal.reason).toBe("gone before");
  late.clear();
});

test("after clear neither the timer nor the client can abort it", async () => {
  const client = new AbortController();
  const deadline = new Deadline(client.signal, 20);
  deadline.clear();
  await Bun.sleep(60);
  client.abort();
  expect(deadline.signal.aborted).toBe(false);
});
