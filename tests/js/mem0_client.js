// mem0's JavaScript MemoryClient (npm mem0ai) against a live memlane server: every method memlane
// serves, called as an application calls it, its answer checked. Run by tests/server/test_mem0_js_client.py
// with MEMLANE_URL, MEMLANE_KEY (a tenant's key) and MEMLANE_ADMIN_KEY (an admin key of the same tenant);
// prints {"checked": [method names]} on success, exits 1 with the failed check otherwise.
"use strict";

const assert = require("node:assert/strict");
const { MemoryClient } = require("mem0ai");

const host = process.env.MEMLANE_URL;
const checked = [];

async function check(name, body) {
  await body();
  checked.push(name);
}

async function rejects(promise, errorName, pattern) {
  await assert.rejects(promise, (error) => {
    assert.equal(error.name, errorName, `${error.name}: ${error.message}`);
    assert.match(error.message, pattern);
    return true;
  });
}

async function main() {
  const client = new MemoryClient({ apiKey: process.env.MEMLANE_KEY, host });
  const admin = new MemoryClient({ apiKey: process.env.MEMLANE_ADMIN_KEY, host });
  let curry, porto, other;

  await check("ping", async () => {
    await client.ping();
    assert.equal(client.organizationId, "memlane");
    assert.equal(client.projectId, process.env.MEMLANE_TENANT);
  });

  await check("add", async () => {
    const added = await client.add("I love Thai curry", { userId: "js-alice", infer: false,
                                                          metadata: { category: "food" } });
    assert.equal(added.status, "SUCCEEDED");
    assert.equal(added.results.length, 1);
    assert.equal(added.results[0].event, "ADD");
    curry = added.results[0].id;
    const listed = await client.add([{ role: "user", content: "I live in Porto" }],
                                    { userId: "js-alice", infer: false });
    porto = listed.results[0].id;
    other = (await client.add("I keep a boat", { userId: "js-alice", infer: false })).results[0].id;
    await rejects(client.add("x", { appId: "an-app" }), "ValidationError", /app_id is not supported/);
  });

  await check("get", async () => {
    const memory = await client.get(curry);
    assert.equal(memory.memory, "I love Thai curry");
    assert.deepEqual(memory.metadata, { category: "food" });
    await rejects(client.get("no-such-memory"), "MemoryNotFoundError", /no-such-memory/);
  });

  await check("getAll", async () => {
    const all = await client.getAll({ filters: { user_id: "js-alice" } });
    assert.equal(all.count, 3);
    assert.deepEqual(new Set(all.results.map((m) => m.id)), new Set([curry, porto, other]));
    const page = await client.getAll({ filters: { user_id: "js-alice" }, page: 2, pageSize: 2 });
    assert.equal(page.count, 3);
    assert.equal(page.results.length, 1);
    assert.equal(page.next, null);
    assert.match(page.previous, /page=1/);
  });

  await check("search", async () => {
    const found = await client.search("what food do I like?", { filters: { user_id: "js-alice" }, topK: 1 });
    assert.deepEqual(found.results.map((m) => m.id), [curry]);
    assert.ok(found.results[0].score > 0);
  });

  await check("update", async () => {
    const updated = await client.update(curry, { text: "I love Thai and Lao curry", timestamp: 1600000000 });
    assert.equal(updated.memory, "I love Thai and Lao curry");
    assert.match(updated.createdAt, /^2020-09-13T12:26:40/);
    const expiring = await client.update(curry, { metadata: { category: "cuisine" }, expirationDate: "2999-01-01" });
    assert.deepEqual(expiring.metadata, { category: "cuisine" });
    assert.match(expiring.validTo, /^2999-01-01/);
    await rejects(client.update(curry, { timestamp: "2999-01-01" }), "ValidationError", /timestamp .* future/);
  });

  await check("history", async () => {
    const events = await client.history(curry);
    assert.deepEqual(events.map((e) => e.event), ["ADD", "UPDATE", "UPDATE"]);
    assert.equal(events[1].oldMemory, "I love Thai curry");
  });

  await check("batchUpdate", async () => {
    const answer = await client.batchUpdate([{ memoryId: porto, text: "I live in Porto, Portugal" },
                                             { memoryId: other, text: "I keep a sailing boat" }]);
    assert.equal(answer.message, "Successfully updated 2 memories");
    assert.equal((await client.get(porto)).memory, "I live in Porto, Portugal");
    await rejects(client.batchUpdate([{ memoryId: porto, text: "x" }, { memoryId: "nope", text: "y" }]),
                  "MemoryNotFoundError", /nope/);
    assert.equal((await client.get(porto)).memory, "I live in Porto, Portugal");  // all or nothing
  });

  await check("batchDelete", async () => {
    const answer = await client.batchDelete([porto, other]);
    assert.equal(answer.message, "Successfully deleted 2 memories");
    await rejects(client.get(porto), "MemoryNotFoundError", /Memory not found/);
  });

  await check("delete", async () => {
    await rejects(client.delete(curry, { deleteLinked: true }), "ValidationError", /delete_linked/);
    assert.deepEqual(await client.delete(curry), { message: "Memory deleted successfully!" });
    assert.equal((await client.getAll({ filters: { user_id: "js-alice" } })).count, 0);
  });

  await check("deleteAll", async () => {
    await client.add("bob's fact", { userId: "js-bob", infer: false });
    const answer = await client.deleteAll({ userId: "js-bob" });
    assert.equal(answer.deleted, 1);
    await rejects(client.deleteAll(), "ValidationError", /user_id/);  // no scope: never "everything"
  });

  await check("getProfile", async () => {
    await client.add("I am a pilot", { userId: "js-carol", infer: false });
    await client.add("I live in Lisbon", { userId: "js-carol", infer: false });
    const profile = await client.getProfile({ entityId: "js-carol" });
    assert.equal(profile.status, "succeeded");
    assert.equal(profile.entityId, "js-carol");
    assert.deepEqual(new Set(profile.profile.facts), new Set(["I am a pilot", "I live in Lisbon"]));
    await rejects(client.getProfile({ entityId: "nobody" }), "MemoryNotFoundError", /nobody/);
  });

  let job;
  await check("generateProfile", async () => {
    job = await client.generateProfile({ entityId: "js-carol", idempotencyKey: "js-1" });
    assert.equal(job.status, "succeeded");
    assert.deepEqual(await client.generateProfile({ entityId: "js-carol", idempotencyKey: "js-1" }), job);
  });

  await check("getProfileJob", async () => {
    const read = await client.getProfileJob(job.statusUrl);
    assert.equal(read.job.status, "succeeded");
    assert.equal(read.job.succeeded, 1);
    assert.deepEqual(await client.getProfileJob(job.jobId), read);
  });

  await check("getProfileSettings", async () => {
    const settings = await client.getProfileSettings();
    assert.equal(settings.enabled, true);
    assert.equal(settings.entities.user.schema, null);
  });

  await check("updateProfileSettings", async () => {
    assert.equal((await client.updateProfileSettings({ enabled: true })).enabled, true);
    await rejects(client.updateProfileSettings({ schema: { type: "object" } }), "ValidationError", /schema/);
    await rejects(client.updateProfileSettings({ enabled: false }), "ValidationError", /switched off/);
  });

  await check("sampleProfiles", async () => {
    await rejects(client.sampleProfiles({ limit: 1 }), "AuthenticationError", /admin/);
    const sampled = await admin.sampleProfiles({ limit: 1 });
    assert.equal(sampled.sampled, 1);
    assert.deepEqual(sampled.entityIds, ["js-carol"]);
  });

  await check("users", async () => {
    await client.add("agent rule", { agentId: "js-helper", infer: false });
    await rejects(client.users(), "AuthenticationError", /admin/);
    const all = await admin.users();  // js-alice and js-bob have no memory left, but their messages
    assert.deepEqual(all.results.map((e) => [e.type, e.name, e.totalMemories]),
                     [["user", "js-alice", 0], ["user", "js-bob", 0], ["user", "js-carol", 2],
                      ["agent", "js-helper", 1]]);
    const page = await admin.users({ page: 4, pageSize: 1 });
    assert.equal(page.count, 4);
    assert.deepEqual(page.results.map((e) => e.name), ["js-helper"]);
  });

  await check("deleteUser", async () => {
    await client.add("dan's fact", { userId: "js-dan", infer: false });
    await client.deleteUser({ entity_type: "user", entity_id: "js-dan" });
    assert.deepEqual(await client.deleteUser({ entity_type: "user", entity_id: "js-dan" }),
                     { message: "Nothing to delete: no user 'js-dan' has memories or messages here", deleted: 0 });
  });

  await check("deleteUsers", async () => {
    assert.deepEqual(await client.deleteUsers({ agentId: "js-helper" }), { message: "Entity deleted successfully." });
    assert.deepEqual((await admin.users()).results.map((e) => e.name), ["js-alice", "js-bob", "js-carol"]);
    await assert.rejects(client.deleteUsers({ appId: "an-app" }), /app_id is not supported/);
    assert.deepEqual(await admin.deleteUsers(), { message: "All users, agents, apps and runs deleted." });
    assert.equal((await admin.users()).count, 0);
  });

  process.stdout.write(JSON.stringify({ checked }) + "\n");
}

main().catch((error) => {
  process.stderr.write(`mem0 JavaScript client check failed after ${JSON.stringify(checked)}:\n${error.stack}\n`);
  process.exit(1);
});
