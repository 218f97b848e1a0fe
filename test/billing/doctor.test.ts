import { afterAll, beforeAll, expect, test } from "bun:test";
import { sql } from "kysely";
import { writeTransaction } from "../../src/db/write-transaction.ts";
import { startTestGateway, type TestGateway } from "../helpers/gateway.ts";
import { account, newAccount } from "./_inprocess.ts";
import { killAllSpawned, runDoctorCli } from "./_support.ts";

/**
 * `gateway doctor` as an operator runs it, a process of its own on the database file: it
 * releases the hold a crashed instance left and passes, and it fails (exit 1, naming the
 * account) when a balance does not match its ledger.
 */

const START = 1_000_000;
const HELD = 4_321;

let gw: TestGateway;
beforeAll(async () => {
  gw = await startTestGateway();
});
afterAll(async () => {
  await gw.close();
  await killAllSpawned();
});

test("a hold left by an instance that is gone is refunded by the doctor, which then passes", async () => {
  const { id } = await newAccount(gw, START);
  // The rows a hold writes (HoldBatcher), for an instance no longer registered: a crashed one.
  await writeTransaction(gw.database.db, async (trx) => {
    await sql`insert into ledger (user_id, kind, amount_micros, balance_after_micros, reference, created_at) values (${id}, 'hold', ${-HELD}, ${START - HELD}, 'req_orphan', 1)`.execute(trx);
    await sql`insert into holds (id, user_id, amount_micros, instance_id, created_at) values ('req_orphan', ${id}, ${HELD}, 'inst_crashed', 1)`.execute(trx);
    await sql`update users set balance_micros = balance_micros - ${HELD} where id = ${id}`.execute(trx);
  });

  const doctor = await runDoctorCli(gw.dir);
  expect(doctor.stdout).toMatch(/\b0 ledger mismatches; 0 open holds; \d+ open balance leases; 1 orphaned holds released\b/);
  expect(doctor.code).toBe(0);
  expect(await account(gw, id)).toEqual({ balance_micros: START, total_spent_micros: 0 });
  const ledger = await gw.database.db.selectFrom("ledger").select(["kind", "amount_micros"]).where("reference", "=", "req_orphan").orderBy("id").execute();
  expect(ledger).toEqual([{ kind: "hold", amount_micros: -HELD }, { kind: "refund", amount_micros: HELD }]);
}, 20_000);

test("a balance that does not match its ledger fails the doctor, which names the account and both sums", async () => {
  const { id } = await newAccount(gw, START);
  await gw.database.db.updateTable("users").set({ balance_micros: START + 1 }).where("id", "=", id).execute();

  const doctor = await runDoctorCli(gw.dir);
  expect(doctor.stdout).toMatch(/\b1 ledger mismatches\b/);
  expect(doctor.stdout).toContain(`account ${id}: balance ${START + 1} micro-USD, ledger sum ${START} micro-USD`);
  expect(doctor.code).toBe(1);
  await gw.database.db.updateTable("users").set({ balance_micros: START }).where("id", "=", id).execute();
}, 20_000);
